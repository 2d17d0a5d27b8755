"""``goldpan serve``: a team labels one workspace in the browser.

``server`` is the HTTP and websocket server (textual-serve's, with goldpan's tokens from
``tokens``, its redacted ``log`` and the ``starts`` gate that starts tabs a few at a time);
each browser tab runs ``tab``, whose app the ``preload`` process forks ready-imported;
``served_app`` is that app's entry, ``served`` the settings it and the server share, and
``tab_messages`` the check of each websocket message. Nothing here imports Textual at
module level except the app's entry: the server process draws nothing.
"""
