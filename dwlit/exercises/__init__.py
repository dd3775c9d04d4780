"""The exercises' checks, for every chapter: a chapter's exercise imports its check from here, e.g.
`from dwlit.exercises import check_window_view, NotDone, reveal_solution`. The grader is `harness`; each part's
checks and solutions are in a module of their own."""
from .harness import NotDone, Result, EXERCISES, Exercise, reveal_solution, progress
from .machine import (check_partition_bytes, check_free_transpose, check_row_range, check_engine_elements,
                      check_strided_rows)
from .kernels import (check_window_view, check_definition_loop, check_dilated_width, check_filter_view,
                      check_conv1d_tile, check_rhs_dilated_tile, check_program_channels, check_program_rows,
                      check_chunk_loop, check_tap_chunks, check_fewest_programs, check_b01f_gather,
                      check_layout_permutation, check_dilated_row, check_h_tile, check_h_tile_rows)
from .apps import (check_layer_call, check_refusal, check_strided_conv1d, check_conv2d_multiplies, check_running_sum,
                   check_matches, check_explain_dispatch)
from .designs import (check_dense_work, check_identity_counts, check_tap_diagonal, check_diagonal_counts,
                      check_im2col_rows, check_taps_view, check_replication, check_vector_ns, check_load_ns,
                      check_vector_idle, check_race_winner, check_pe_cells)
