"""The clash workflow between the collision core and the reports: clash tests, their
evaluation frame by frame, clash records with their statuses across runs, and groups.

May import `collide_addon.core`, the standard library and numpy only: never Blender,
never `collide_addon.report` (the reports build on this package, not the other way).

    tests.py     ClashTest, Selector, IgnoreRules; the tests file (load_tests, save_tests)
    evaluate.py  ObjectMetadata -> ObjectTable; ClashTest -> PreparedTest;
                 PreparedTest + ShapeBatch of a frame -> FrameHits (`evaluate_frame`)
    records.py   FrameHits of all frames -> ClashRecord (`clash_records`); statuses
                 across runs (`carry_over_status`); CI failure (`count_failing`)
    groups.py    records by object, by test, in spatial clusters
    atomic.py    atomic file writes (a reader never sees half a file)
    json_input.py  JSON input files read within size and number limits
"""
