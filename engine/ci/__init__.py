"""The test set as a CI gate: snapshots, the gate's verdict and its reports.

``gate`` is the one home of a gate's verdict (floors, regressions, refusals);
``snapshots`` and ``snapshot_files`` what changed since a snapshot; ``rankings`` which
rankings a score read and whether the gate may vouch for them; ``holes`` the Judged@10
warning; ``reports`` the JUnit XML and Markdown summaries of a verdict.
"""
