"""What ``vulture`` reports unused in engine/, tui/ and goldpan/ but is used on purpose.

Run ``vulture`` from the repository root (its settings are pyproject's ``[tool.vulture]``,
which lists this file): it must report nothing (``tests/test_dead_code.py``). Names that
frameworks call by convention (Textual's ``compose``, ``on_*``, ``action_*``, ``watch_*``,
``BINDINGS``, ``DEFAULT_CSS``, ``CSS_PATH``, ``HORIZONTAL_BREAKPOINTS`` and ``@on``
handlers; pytest's ``pytest_*`` hooks; the CLI's ``cmd_*`` functions, which the command
declarations name as "module:function" strings) are ignored there. Everything else that is
kept is listed here, each with its reason. Anything new that vulture finds is dead: delete
it, or add it here with a reason.

This file is read by vulture only; it is never imported.
"""

# ruff: noqa: B018, F821
# (bare names and attributes are how vulture whitelists mark a name as used)

# -- engine ---------------------------------------------------------------------------------

write_e5_vectors  # engine/demo.py: run by hand to rebuild the demo's e5 vectors (its docstring)
promise  # engine/ci/gate.py Rule.promise: the README's words for a refusal; tests match the docs
REFUSALS  # engine/ci/gate.py: the list of refusals the docs and tests/security walk
_.exit_code  # engine/ci/gate.py GateResult.exit_code: the Python API's exit code for a gate
_.redirect_request  # engine/retrieve/remote.py: urllib's hook, overridden to refuse redirects
STATUSES  # engine/verdict.py: every verdict status, the --json contract the tests check
found_by_feedback  # engine/pooling.py Candidate: set by keyword, read by the tests (issue 49)
NEVER  # engine/judging/stopping.py: the rule that never offers a stop (only tests read it)

# -- goldpan (the Python API and the pytest plugin) ------------------------------------------

__getattr__  # goldpan/__init__.py: the package's lazy attributes (PEP 562)
_.compare_to  # goldpan/api.py Result.compare_to: public API (README's pytest example)
_.runtest  # goldpan/pytest_plugin.py: pytest's Item hook
_.reportinfo  # goldpan/pytest_plugin.py: pytest's Item hook

# -- tui: attributes that Textual or rich read --------------------------------------------------

_.animation_level  # tui/app.py: Textual's App setting
_.sub_title  # Textual's header subtitle (app, ranking controller)
_.border_title  # Textual's widget border text (help screen)
_.border_subtitle  # Textual's widget border text (help screen)
_.cursor_blink  # Textual's Input setting (modals, write screen)
_.header_height  # Textual's DataTable setting (questions, review)
_.cell_padding  # Textual's DataTable setting (review)
_.show_command_palette  # Textual's Footer setting (screens' base)
_.min_width  # rich's Column setting (tui/cli/commands/scores.py)
can_undo  # tui/screens/judge.py: a reactive with bindings=True, the footer reads it
stoppable  # tui/screens/judge.py: a reactive with bindings=True, the `x` key's `when`
parameters  # the signature of Textual's check_action override (screens' base, modals)

# -- tui: the `when` guards of commands, read by name (tui.commands.available) ---------------

_.can_judge  # tui/screens/judge.py
_.auto_advancing  # tui/screens/judge.py
_.not_auto_advancing  # tui/screens/judge.py
_.has_model_grades  # tui/screens/adjudicate.py
_.has_snapshots  # tui/screens/review.py
_.log_waiting  # tui/screens/write.py
_.log_in_editor  # tui/screens/write.py

# -- engine: what the standard library calls by name --------------------------------------

_.http_open  # engine/retrieve/remote.py: urllib's opener calls a handler's <scheme>_open
_.https_open  # engine/retrieve/remote.py: the same, for https

# -- tui: Textual internals overridden (issue 48 item 6 moves them behind one door) ----------

_._fatal_error  # tui/app.py: ends the app without Textual's traceback (exit 3 and a log)

# -- tui/textual_compat.py: the door's functions the tests read the screen through --------
# (tests use no private Textual name themselves; vulture reads only the shipped packages)

_.TEXTUAL_CHECKED  # the Textual version the private names were read in (its test compares)
_.TEXTUAL_SERVE_CHECKED  # the same for textual-serve
_.frames_rendered  # tests/tui: counting frames without textual._compositor
_.screen_text  # tests/tui: what a screen paints, as text
_.screen_frame  # tests/tui: the whole frame, as text
_.messages_dispatched  # tests/tui: what the message pump handled
_.table_measured  # tests/tui: a DataTable's measure done
_.laid_out_region  # tests/tui: where a widget was laid out
_.notification_messages  # tests/tui: the notifications on show
_.option_height  # RemeasuringOptionList: one option's height (tests/tui/test_candidate_widths)
_._make_app  # with_application: textual-serve's Server calls it by name

# -- tui and the CLI: what the tests read to observe the app -----------------------------------

_.spawned  # tui/serve/server.py: app processes started (tests/tui/serve/test_serve_starts.py)
_.computed  # tui/widgets/analysis_panel.py: analyses drawn (the tests count recomputations)
_.shown_text  # tui/widgets/document_view.py: the text on show (tests/tui/test_big_document.py)
