"""Analyses of a workspace's retrievers and questions: compare, failures, no-answer, power.

``analyses`` gathers them as plain data for the CLI and the app; ``compare`` and ``power``
are the paired statistics, ``fusion_sweep`` the honest sweep of a fusion's weight,
``fidelity`` how alike two retrievers rank, ``noanswer`` the top-1 threshold, ``overlap``
the question-vs-title warning.
"""
