"""What the app does that is neither a screen nor a widget, one flow per module.

The app (:mod:`tui.app`) composes them and stays wiring: :mod:`.trust_flow` asks the
machine's owner before a workspace's outside retrievers run, :mod:`.leases` keeps a served
annotator's hold on the question they judge, :mod:`.ranking` takes in other processes'
commits and ranks the questions not ranked yet.
"""
