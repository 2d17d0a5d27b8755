"""A team labeling one test set: work handed out, agreement between people, merging.

``assign`` hands out work (``goldpan serve``), ``agreement`` measures inter-annotator
agreement, ``merge`` joins workspaces labeled separately.
"""
