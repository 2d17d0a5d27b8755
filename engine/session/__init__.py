"""A labeling session: one annotator's changes to a workspace, with undo and live scores.

``labeling`` is the session itself (:class:`~engine.session.labeling.LabelingSession`);
``state`` what it holds of one question, ``undo`` its undo, ``questions`` the questions it
adds and edits, ``reads`` what the app's screens read through it.
"""
