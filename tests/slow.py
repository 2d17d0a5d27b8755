"""The slow layer: which tests ``pytest -m "not slow"`` leaves out, and why.

The fast layer (``pytest -m "not slow"``) is the inner loop: at most 60 s on 2 cores. The
full suite (``pytest``) runs everything, slow tests too. Tests are marked here, in one
place, not in their files (tests/conftest.py's ``pytest_collection_modifyitems`` calls
:func:`mark_slow`).

How the lists were made: the whole suite was run with ``--durations=0`` (2 cores, shared
with other work: load about 12-19, so each number is several times a quiet machine's) and
each test's setup, call and teardown were added up. A file whose tests took more than 15 s
together is slow whole (its module fixtures, servers and models cost most of it, and a file
runs whole in one worker); in the other files, a test that took more than 2 s is slow. The
numbers are those seconds. Remeasure after moving tests, and keep the lists in step:
``tests/test_layers.py`` fails when an entry names a file or test that no longer exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SLOW_FILES: dict[str, float] = {
    "engine/retrieve/test_e5.py": 277,
    "tui/test_review_panels.py": 233,
    "engine/test_reference_korquad.py": 185,
    "tui/test_app.py": 160,
    "security/test_model_names.py": 151,
    "tui/test_snapshots.py": 143,
    "engine/test_properties.py": 131,
    "tui/test_cursor_on_move.py": 122,
    "engine/test_crash.py": 119,
    "engine/workspace/test_shared_file.py": 117,
    "engine/retrieve/test_dense.py": 113,
    "engine/retrieve/test_pglite.py": 96,
    "tui/test_flow.py": 77,
    "cli/test_safe_writes.py": 65,
    "engine/judges/test_model_judge_models.py": 62,
    "tui/test_keys_documented.py": 55,
    "engine/formats/test_formats.py": 54,
    "cli/test_gate_fresh.py": 54,
    "security/test_gate_refusals.py": 50,
    "tui/test_small_terminals.py": 50,
    "engine/test_kiwi_helper.py": 50,
    "security/test_gate_reports.py": 47,
    "security/test_gate_plugin.py": 45,
    "tui/test_markup_literal.py": 45,
    "cli/test_verdict_cli.py": 45,
    "tui/test_demo_kiwi_later.py": 44,
    "tui/serve/test_serve_browser.py": 43,
    "tui/test_review_verdict.py": 43,
    "tui/test_regression_views.py": 42,
    "tui/test_counters.py": 42,
    "security/test_screens_show_escapes_as_pictures.py": 35,
    "tui/serve/test_preload.py": 33,
    "cli/test_cli.py": 32,
    "cli/test_cli_exit.py": 32,
    "tui/test_candidate_rows.py": 30,
    "security/test_docs_command.py": 27,
    "tui/test_adjudicate.py": 26,
    "tui/test_big_document.py": 25,
    "security/test_readers_name_the_line.py": 25,
    "engine/analysis/test_analysis.py": 25,
    "engine/analysis/test_compare.py": 24,
    "engine/retrieve/test_retrievers.py": 24,
    "engine/retrieve/test_postgres.py": 23,
    "tui/serve/test_served_trust.py": 22,
    "cli/test_cli_analysis.py": 20,
    "tui/test_document_layout.py": 20,
    "engine/retrieve/test_fuse.py": 19,
    "tui/test_readonly.py": 19,
    "tui/test_write_refused.py": 19,
    "engine/retrieve/test_http_retrievers.py": 18,
    "tui/test_ranked_behind.py": 18,
    "tui/serve/test_served.py": 18,
    "cli/test_cli_validation.py": 17,
    "cli/test_sweep_fusion.py": 17,
    "security/test_bad_imports_change_nothing.py": 17,
    "engine/test_demo.py": 15,
    "cli/test_trust.py": 15,
    "engine/test_tokenize_fuzz.py": 15,
    # tests moved out of slow files (engine/test_crash, test_http_retrievers,
    # test_opensearch_retrievers, test_postgres) stay in the slow layer: they start servers,
    # the app or a killed process. Seconds with -n 2 at load 5-7.
    "tui/test_outside_retrievers_served.py": 7.6,
    "tui/test_labeling_crash.py": 7.3,
    "cli/test_postgres_retrievers.py": 4.6,
    "cli/test_http_retrievers.py": 2.3,
    "cli/test_opensearch_retrievers.py": 1.6,
}
"""Test files (under tests/) whose tests are all slow: their measured seconds together."""

SLOW_TESTS: dict[str, float] = {
    # measured quiet (load 1-2) after the issue 46-49 merges, over 2 s each
    "security/test_outside_answers.py::test_a_database_that_trickles_its_rows_stops_at_the_deadline": 12.0,
    "cli/test_seed_studies.py::test_the_seed_studies_page_runs_from_goldpan_new_to_both_tables": 9.8,
    "security/test_judging_refusals.py::test_non_finite_vectors_in_a_received_workspace_never_reach_the_proposals": 8.0,
    "security/test_served_websocket.py::test_junk_on_an_open_websocket_is_ignored_and_the_session_goes_on": 3.8,
    "engine/judging/test_feedback.py::test_a_dense_retrievers_stored_vectors_are_a_space_of_their_own": 3.3,
    "security/test_helpers_run_only_goldpan.py::test_a_served_tab_runs_goldpans_own_code_from_a_folder_of_lookalike_packages": 3.1,
    "security/test_helpers_run_only_goldpan.py::test_the_kiwi_helper_runs_goldpans_own_code_from_a_folder_of_lookalike_packages": 2.9,
    "cli/test_score_not_ranked.py::test_the_gate_on_the_demo_with_a_command_never_trusted": 2.7,
    "cli/test_serve.py::test_a_port_in_use_is_refused_before_any_link_is_given": 2.5,
    "tools/test_house.py::test_text_report_and_check_agree": 2.4,
    "cli/test_exit_codes.py::test_a_missed_floor_is_the_only_exit_1": 2.3,
    "tui/serve/test_serve_load.py::test_403_without_a_valid_token_and_a_short_team_run": 11.6,
    "cli/test_score_not_ranked.py::test_score_no_pool_says_not_ranked_yet_and_its_means_leave_them_out": 10.8,
    "tui/serve/test_serve_starts.py::test_the_second_tab_waits_for_the_first_app_to_start_and_says_so": 9.4,
    "engine/test_querylog.py::test_grouping_many_queries_is_fast": 7.9,
    "cli/test_ci_reports.py::test_junit_xml_fails_exactly_the_regressed_questions": 7.8,
    "security/test_cli_prints_markup_literally.py::test_markup_and_escapes_print_literally": 7.5,
    "cli/test_regression_korquad.py::test_score_against_lists_exactly_the_moved_questions": 7.2,
    "tui/test_model_judge_views.py::test_adjudicate_shows_the_model_beside_the_people_and_adopting_is_a_persons_act": 6.8,
    "cli/test_ci_reports.py::test_without_a_snapshot_a_case_fails_when_its_gold_is_not_in_the_top_k": 6.5,
    "tui/test_model_judge_views.py::test_the_label_screen_shows_model_grades_only_when_asked": 5.5,
    "engine/retrieve/test_bm25_index.py::test_derived_counts_equal_counting_the_tokens_on_korquad[word+bigram]": 5.4,
    "engine/session/test_races.py::test_two_processes_keeping_one_logged_query_make_one_question": 5.4,
    "engine/test_reference_beir.py::test_exported_qrels_are_the_beir_judgments[beir]": 5.3,
    "security/test_gate_snapshot_input.py::test_a_snapshot_value_of_10_to_the_400_is_exit_2_naming_file_and_field": 5.3,
    "engine/judging/test_queue.py::test_the_queue_is_most_unjudged_first_then_id_then_those_to_adjudicate": 4.9,
    "cli/test_cli_label.py::test_two_processes_labeling_at_once_keep_every_label": 4.5,
    "engine/test_reference_beir.py::test_exported_qrels_are_the_beir_judgments[beir+unmatched-question]": 4.4,
    "tui/test_review_fused.py::test_review_scores_a_fused_retriever": 4.4,
    "engine/retrieve/test_pool_memory.py::test_counting_and_indexing_a_large_document_needs_under_three_times_its_size": 4.1,
    "security/test_gate_cache_key.py::test_code_reached_through_a_symlink_changes_the_key": 4.0,
    "tui/serve/test_frozen_heap.py::test_the_heap_is_frozen_once_started_and_only_when_asked": 3.8,
    "cli/test_cli_outputs.py::test_a_file_size_limit_midway_leaves_the_old_file": 3.7,
    "engine/judges/test_judge_report.py::test_kappa_interval_is_a_bootstrap_over_questions": 3.4,
    "cli/test_cli_import_onto.py::test_onto_an_empty_corpus_or_paragraphs_is_refused": 3.3,
    "cli/test_cli_docs.py::test_the_limit_says_how_many_more_there_are": 3.1,
    "security/test_gate_cache_key.py::test_a_link_back_up_the_tree_is_walked_once": 2.9,
    "security/test_gate_cache_key.py::test_a_broken_link_is_an_error_not_a_different_key": 2.9,
    "cli/test_serve_edges.py::test_an_unexpected_error_is_one_line_naming_its_crash_log": 2.8,
    "security/test_import_onto.py::test_a_title_with_escapes_is_named_as_text_in_the_refusal": 2.7,
    "engine/team/test_agreement.py::test_kappa_agrees_with_sklearn[0]": 2.7,
    "engine/retrieve/test_order.py::test_cut_floors_keep_every_document_of_the_top_from_subnormal_to_beyond_float32": 2.6,
    "security/test_gate_cache_key.py::test_a_device_among_the_key_files_is_refused": 2.5,
    "cli/test_cli_docs.py::test_a_search_finds_id_title_or_text_whatever_the_case": 2.4,
    "cli/test_cli_team.py::test_agreement_json_is_the_engines_report": 2.4,
    "engine/retrieve/test_bm25_index.py::test_derived_counts_equal_counting_the_tokens_on_korquad[bigram]": 2.4,
    "cli/test_exit_codes.py::test_a_file_size_limit_in_a_real_process_exits_2_and_loses_nothing": 2.3,
    "security/test_background_ranking.py::test_a_retriever_that_fails_is_not_run_again_until_a_reload": 2.1,
    "test_import_hygiene.py::test_the_app_and_its_first_screen_import_nothing_slow": 2.1,
    "cli/test_cli_docs.py::test_bad_usage_exits_2_and_writes_nothing": 2.1,
    "test_import_hygiene.py::test_pooling_bm25_imports_no_scipy_and_no_network_modules": 2.1,
    "tools/test_house.py::test_circles_with_every_import_are_grimps": 7.9,
    "test_layers.py::test_every_slow_test_is_collected_and_marked": 17.9,
    # measured quiet on 2026-12-05 (load 1.7-2), after the tests of issue 48 moved
    "cli/test_judge_model.py::test_without_enough_peoples_grades_the_judge_refuses_and_says_how_many": 8.0,
    "cli/test_exit_codes.py::test_a_gate_over_no_scored_question_is_bad_input_not_a_pass_or_a_missed_floor": 2.8,
    "tui/test_empty_workspace.py::test_the_table_comes_back_when_questions_arrive": 2.3,
    "tui/test_textual_compat.py::test_no_private_textual_name_outside_the_compat_module": 2.2,
    "tui/test_judging_blind.py::test_a_stopped_question_counts_as_stopped_everywhere": 2.1,
}
"""Single slow tests in otherwise fast files (node ids under tests/): their measured seconds."""


def layer_key(item: pytest.Item) -> tuple[str, str]:
    """(file, node id), both relative to tests/, as the lists above name them."""
    rel = item.path.relative_to(TESTS).as_posix()
    _, sep, name = item.nodeid.partition("::")
    return rel, f"{rel}{sep}{name}"


def mark_slow(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every collected test of :data:`SLOW_FILES` and :data:`SLOW_TESTS`."""
    for item in items:
        rel, nodeid = layer_key(item)
        if rel in SLOW_FILES or nodeid in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
