"""goldpan's interfaces: the ``goldpan`` CLI, the Textual app and its browser sessions.

- ``cli/``: the ``goldpan`` command (every subcommand; only ``open`` and ``demo`` start
  the app);
- the Textual app: ``app.py`` wires the ``screens/`` (each with its ``widgets/``) and the
  ``controllers/`` (the trust question, a served annotator's leases), keys declared once
  in ``actions.py`` and shown by ``help.py``;
- ``serve/``, browser sessions: ``server.py`` (``goldpan serve``) starts one app process
  per person's tab (``served_app.py``), a few at a time (``starts.py``), for the people
  whose links ``tokens.py`` keeps, and logs one redacted line per event (``log.py``).
"""
