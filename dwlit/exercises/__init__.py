"""The exercises and the checks that grade them. A chapter's exercise calls its check from here, e.g.
`from dwlit.exercises import check_window_view, NotDone, reveal_solution`."""
from .basics import (NotDone, Result, EXERCISES, TITLES, progress, reveal_solution, check_window_view, check_filter_view,
                     check_conv1d_tile, check_program_channels)
from .more import MORE_EXERCISES, check_chunk_loop, check_dilated_row, check_h_tile, check_strided_conv1d
from .problems import PROBLEMS, check_rhs_dilated_tile, check_tap_chunks, check_b01f_gather, check_program_rows
