"""Evaluating clash tests: selectors, ignore rules, criteria, hits of one frame."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from collide_addon.clash import evaluate as evaluate_module
from collide_addon.clash.evaluate import (
    A_INSIDE_B,
    B_INSIDE_A,
    CROSSING,
    PENETRATING,
    FrameMeshes,
    Interval,
    KeptMeshContacts,
    MeshPairCache,
    ObjectMetadata,
    PairContacts,
    broad_phase_margin,
    concat_hits,
    core_corners,
    duplicate_mask,
    eligible_pair_mask,
    evaluate_frame,
    evaluate_intervals,
    hits_from_pairs,
    interval_candidates,
    mesh_pair_contacts,
    object_table,
    orient_pairs,
    prepare_test,
    sample_contacts,
    select_objects,
    vanished_pairs,
)
from collide_addon.clash.tests import ClashTest, IgnoreRules, Selector
from collide_addon.core import CoherentBounds, ShapeBatch, pair_distance
from collide_addon.core import mesh as mesh_module
from collide_addon.core.contact import clash_mask, contact_epsilon, largest_contact_epsilon
from collide_addon.core.mesh import prepare_mesh
from collide_dev.synthetic import mixed_scene
from tests.clash.helpers import make_hits


def rotation_z(angle: float) -> np.ndarray:
    cosine, sine = np.cos(angle), np.sin(angle)
    return np.array([[cosine, -sine, 0.0], [sine, cosine, 0.0], [0.0, 0.0, 1.0]])


def all_pairs(count: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(count), 2)), dtype=np.int64).reshape(-1, 2)


# --- Selectors and ignore rules ----------------------------------------------------------


OBJECTS = [
    ObjectMetadata("Pipe.001", "MESH", ("MEP",), "Rack", {"discipline": "MEP"}, "PipeMesh"),
    ObjectMetadata(
        "Pipe.002", "MESH", ("MEP", "Shared"), "Rack", {"discipline": "MEP"}, "PipeMesh"
    ),
    ObjectMetadata("Wall", "MESH", ("ARCH", "Shared"), None, {"discipline": "ARCH", "fire": 1}),
    ObjectMetadata("Lamp", "LIGHT", ("ARCH",), "Rack", {}),
    ObjectMetadata("pipe_lower", "EMPTY", (), None, {"fire": 0}),
]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (Selector(), [True, True, True, True, True]),
        (Selector(name="Pipe*"), [True, True, False, False, False]),
        (Selector(name="*.00[2-9]"), [False, True, False, False, False]),
        (Selector(types=("MESH", "EMPTY")), [True, True, True, False, True]),
        (Selector(collections=("Shared", "ARCH")), [False, True, True, True, False]),
        (Selector(properties={"discipline": "MEP"}), [True, True, False, False, False]),
        (Selector(properties={"fire": None}), [False, False, True, False, True]),
        (Selector(collections=("ARCH",), types=("MESH",)), [False, False, True, False, False]),
    ],
)
def test_select_objects(selector, expected):
    assert select_objects(selector, OBJECTS).tolist() == expected


def test_a_name_pattern_takes_an_instance_by_its_own_or_its_placed_objects_name():
    instance = ObjectMetadata(
        "Link/Beam", "MESH", ("Structure",), is_instance=True, placed_name="Beam"
    )
    plain = ObjectMetadata("Beam Link", "MESH")
    for pattern, expected in (("Beam*", [True, True]), ("Link/*", [True, False])):
        assert select_objects(Selector(name=pattern), [instance, plain]).tolist() == expected


def test_object_table_codes_and_membership():
    table = object_table(OBJECTS)
    assert table.names.tolist() == [obj.name for obj in OBJECTS]
    parents = table.parent_codes
    assert parents[0] == parents[1] == parents[3] >= 0 and parents[2] == parents[4] == -1
    sources = table.instance_codes
    assert sources[0] == sources[1] >= 0 and (sources[2:] == -1).all()
    assert table.collection_membership.sum(axis=1).tolist() == [1, 2, 2, 1, 0]
    shared = table.collection_membership[1] & table.collection_membership[2]
    assert shared.sum() == 1
    with pytest.raises(ValueError, match="unique"):
        object_table([ObjectMetadata("x"), ObjectMetadata("x")])


def test_eligible_pair_mask_sets_and_each_ignore_rule():
    table = object_table(OBJECTS)
    pairs = all_pairs(len(OBJECTS))

    def eligible(test):
        mask = eligible_pair_mask(prepare_test(test, table), pairs)
        return {tuple(table.names[pair].tolist()) for pair in pairs[mask]}

    pipes = Selector(name="Pipe*")
    others = Selector(name="[!P]*")
    assert eligible(ClashTest("t", pipes)) == {("Pipe.001", "Pipe.002")}
    assert eligible(ClashTest("t", pipes, others)) == {
        ("Pipe.001", "Wall"),
        ("Pipe.001", "Lamp"),
        ("Pipe.002", "Wall"),
        ("Pipe.002", "Lamp"),
        # Globs are case-sensitive, as Blender's names are.
        ("Pipe.001", "pipe_lower"),
        ("Pipe.002", "pipe_lower"),
    }
    everything = set(itertools.combinations([obj.name for obj in OBJECTS], 2))
    assert eligible(ClashTest("t")) == everything
    same_parent = {("Pipe.001", "Pipe.002"), ("Pipe.001", "Lamp"), ("Pipe.002", "Lamp")}
    assert eligible(ClashTest("t", ignore=IgnoreRules(same_parent=True))) == (
        everything - same_parent
    )
    assert eligible(ClashTest("t", ignore=IgnoreRules(same_instance_source=True))) == (
        everything - {("Pipe.001", "Pipe.002")}
    )
    same_collection = {("Pipe.001", "Pipe.002"), ("Pipe.002", "Wall"), ("Wall", "Lamp")}
    assert eligible(ClashTest("t", ignore=IgnoreRules(same_collection=True))) == (
        everything - same_collection
    )
    # Either order, and pairs naming absent objects are ignored rather than errors.
    explicit = IgnoreRules(pairs=(("Wall", "Pipe.001"), ("Lamp", "Ghost")))
    assert eligible(ClashTest("t", ignore=explicit)) == everything - {("Pipe.001", "Wall")}
    reversed_pairs = all_pairs(len(OBJECTS))[:, ::-1]
    mask = eligible_pair_mask(prepare_test(ClashTest("t", ignore=explicit), table), reversed_pairs)
    assert (~mask).sum() == 1 and table.names[reversed_pairs[~mask][0]].tolist() == [
        "Wall",
        "Pipe.001",
    ]


def test_orient_pairs_puts_set_a_first_and_sorts_self_pairs_by_name():
    table = object_table([ObjectMetadata("b"), ObjectMetadata("a"), ObjectMetadata("c")])
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    self_test = prepare_test(ClashTest("t"), table)
    assert table.names[orient_pairs(self_test, pairs)].tolist() == [
        ["a", "b"],
        ["b", "c"],
        ["a", "c"],
    ]
    c_against_rest = prepare_test(ClashTest("t", Selector(name="c"), Selector()), table)
    assert table.names[orient_pairs(c_against_rest, pairs[1:])].tolist() == [
        ["c", "b"],
        ["c", "a"],
    ]
    assert orient_pairs(self_test, np.zeros((0, 2), dtype=np.int64)).shape == (0, 2)


# --- Criteria ---------------------------------------------------------------------------


def test_broad_phase_margin_per_type():
    batch = ShapeBatch.spheres(np.array([[0.0, 0, 0], [300.0, 0, 0]]), np.array([1.0, 1.0]))
    epsilon = largest_contact_epsilon(batch)
    # Centre 300 plus radius 1, rounded up to 16 steps per power of two: 320.
    assert epsilon == pytest.approx(3.2e-4)
    hard = ClashTest("t", test_type="hard", tolerance=0.01, geometry="proxy")
    assert broad_phase_margin(hard, batch) == -0.01
    # Meshes inside proxies that only touch may still penetrate: every meeting pair.
    hard_on_meshes = ClashTest("t", test_type="hard", tolerance=0.01, geometry="mesh")
    assert broad_phase_margin(hard_on_meshes, batch) == epsilon
    clearance = ClashTest("t", test_type="clearance", tolerance=0.2)
    assert broad_phase_margin(clearance, batch) == 0.2 + epsilon
    touching = ClashTest("t", test_type="touching", tolerance=0.001)
    assert broad_phase_margin(touching, batch) == 0.001 + epsilon
    duplicates = ClashTest("t", test_type="duplicates", tolerance=0.01)
    # Duplicates are within tolerance + epsilon of each other, flat ones need not overlap.
    assert broad_phase_margin(duplicates, batch) == 0.01 + epsilon


def test_clash_mask_boundaries():
    distance = np.array([-0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2])
    assert clash_mask("hard", 0.1, distance, 0.0).tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert clash_mask("hard", 0.0, distance, 0.0).tolist() == [1, 1, 1, 0, 0, 0, 0]
    # Clearance is inclusive: a gap of exactly the clearance is reported, as IfcClash does.
    assert clash_mask("clearance", 0.1, distance, 0.0).tolist() == [1, 1, 1, 1, 1, 1, 0]
    assert clash_mask("touching", 0.1, distance, 0.0).tolist() == [0, 1, 1, 1, 1, 1, 0]
    assert clash_mask("touching", 0.0, distance, 0.0).tolist() == [0, 0, 0, 1, 0, 0, 0]
    with pytest.raises(ValueError, match="not a distance-based"):
        clash_mask("duplicates", 0.0, distance, 0.0)


def test_clash_mask_counts_rounding_as_contact():
    """Contacts that float32 matrices put a hair either side of zero: touching at
    tolerance 0, never a hard clash; an epsilon per pair scales with the coordinates."""
    distance = np.array([-8e-7, -1e-9, 0.0, 3e-7, -4e-5, -4e-5])
    epsilon = contact_epsilon(np.array([[1, 0, 0]] * 4 + [[0, 0, 0], [0, 0, 50.0]]))
    assert clash_mask("hard", 0.0, distance, epsilon).tolist() == [0, 0, 0, 0, 1, 0]
    assert clash_mask("touching", 0.0, distance, epsilon).tolist() == [1, 1, 1, 1, 0, 1]
    assert clash_mask("clearance", 0.0, distance, epsilon).tolist() == [1, 1, 1, 1, 1, 1]


def test_hard_and_touching_with_one_tolerance_never_report_the_same_pair():
    distance = np.arange(-300, 301) / 1000
    for epsilon in (0.0, 1e-6, 0.02):
        hard = clash_mask("hard", 0.1, distance, epsilon)
        touching = clash_mask("touching", 0.1, distance, epsilon)
        assert not (hard & touching).any()
        assert (hard | touching).tolist() == (distance <= 0.1 + epsilon).tolist()


def test_core_corners():
    batch = ShapeBatch.concat(
        [
            ShapeBatch.boxes([[1.0, 2.0, 3.0]], [rotation_z(0.3)], [[1.0, 2.0, 3.0]]),
            ShapeBatch.spheres([[5.0, 0.0, 0.0]], [2.0]),
            ShapeBatch.capsules([[0.0, 0.0, 0.0]], [[0.0, 4.0, 0.0]], [1.0]),
        ]
    )
    corners = core_corners(batch, np.array([0, 1, 2]))
    assert corners.shape == (3, 8, 3)
    assert np.allclose(corners[0].mean(axis=0), [1.0, 2.0, 3.0])
    assert np.allclose(np.linalg.norm(corners[0] - [1.0, 2.0, 3.0], axis=1), np.sqrt(14.0))
    assert np.allclose(corners[1], [5.0, 0.0, 0.0])
    ends = np.unique(np.round(corners[2], 9), axis=0)
    assert np.allclose(ends, [[0.0, 0.0, 0.0], [0.0, 4.0, 0.0]])


def test_duplicate_mask():
    turned = rotation_z(np.pi / 2)
    boxes = ShapeBatch.boxes(
        [[0, 0, 0], [0, 0, 0], [0.005, 0, 0], [0.5, 0, 0], [0, 0, 0]],
        [np.eye(3), turned, np.eye(3), np.eye(3), rotation_z(np.pi / 4)],
        # The quarter turn with swapped x/y extents is the same box.
        [[1, 2, 3], [2, 1, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]],
    )
    others = ShapeBatch.concat(
        [
            ShapeBatch.capsules([[0, 0, 0], [0, 0, 1]], [[0, 0, 1], [0, 0, 0]], [0.5, 0.5]),
            ShapeBatch.spheres([[0, 0, 0], [0, 0, 0]], [1.0, 1.02]),
            ShapeBatch.boxes([[0, 0, 0]], [np.eye(3)], [[1, 1, 1]]),
        ]
    )
    batch = ShapeBatch.concat([boxes, others])
    pairs = np.array([[0, 1], [0, 2], [0, 3], [0, 4], [5, 6], [7, 8], [7, 9]])
    assert duplicate_mask(batch, pairs, 0.01).tolist() == [1, 1, 0, 0, 1, 0, 0]
    assert duplicate_mask(batch, pairs, 0.05).tolist() == [1, 1, 0, 0, 1, 1, 0]
    assert duplicate_mask(batch, np.zeros((0, 2), dtype=np.int64), 0.01).shape == (0,)


# --- Frames -------------------------------------------------------------------------------


def spheres_scene(names, centers, radii):
    table = object_table([ObjectMetadata(name) for name in names])
    return table, ShapeBatch.spheres(centers, radii)


def test_hits_from_pairs_orients_and_takes_midpoint_and_bounds():
    table, batch = spheres_scene(["b", "a"], [[0, 0, 0], [1.5, 0, 0]], [1.0, 1.0])
    prepared = prepare_test(ClashTest("t"), table)
    result = pair_distance(batch, [0], [1])
    contacts = PairContacts(
        pairs=np.array([[0, 1]]),
        distances=result.distance,
        points_i=result.point_i,
        points_j=result.point_j,
        on_mesh=np.array([True]),
        relations=np.array([B_INSIDE_A], dtype=np.int8),
    )
    hits = hits_from_pairs(prepared, batch, 7, contacts)
    assert hits.frames.tolist() == [7]
    assert hits.names.tolist() == [["a", "b"]]
    assert hits.kinds.tolist() == [[1, 1]]
    assert np.allclose(hits.distances, [-0.5])
    assert np.allclose(hits.points, [[0.75, 0, 0]])
    assert np.allclose(hits.bounds, [[[-1, -1, -1], [2.5, 1, 1]]])
    # "a" is object 1: its witness comes first, and "b inside a" reads "a inside b" now.
    assert np.allclose(hits.witnesses, [[result.point_j[0], result.point_i[0]]])
    assert hits.relations.tolist() == [A_INSIDE_B]
    assert hits.on_mesh.tolist() == [True]


@pytest.mark.parametrize("test_type", ["hard", "clearance", "touching"])
def test_evaluate_frame_agrees_with_brute_force(test_type):
    generator = np.random.default_rng(4)
    count = 60
    names = [f"S{index:02d}" for index in range(count)]
    table, batch = spheres_scene(
        names, generator.uniform(0, 6, (count, 3)), generator.uniform(0.2, 0.8, count)
    )
    test = ClashTest("t", Selector(name="S0*"), Selector(), test_type, tolerance=0.1)
    prepared = prepare_test(test, table)
    hits = evaluate_frame(prepared, batch, 3)
    pairs = all_pairs(count)
    result = pair_distance(batch, pairs[:, 0], pairs[:, 1])
    epsilon = contact_epsilon(0.5 * (result.point_i + result.point_j))
    expected_mask = clash_mask(test_type, 0.1, result.distance, epsilon)
    expected_mask &= eligible_pair_mask(prepared, pairs)
    expected = {tuple(sorted(table.names[pair])) for pair in pairs[expected_mask]}
    assert {tuple(sorted(pair)) for pair in hits.names.tolist()} == expected
    assert len(expected) > 0
    assert all(name.startswith("S0") for name in hits.names[:, 0])
    assert (hits.frames == 3).all()


def test_evaluate_frame_with_a_broad_phase_kept_across_frames():
    generator = np.random.default_rng(5)
    count = 200
    names = [f"S{index:03d}" for index in range(count)]
    centers = generator.uniform(0, 12, (count, 3))
    radii = generator.uniform(0.2, 0.8, count)
    test = ClashTest("t", Selector(name="S0*"), Selector(), "clearance", tolerance=0.1)
    coherent = CoherentBounds()
    for frame in range(1, 9):
        table, batch = spheres_scene(names, centers, radii)
        prepared = prepare_test(test, table)
        kept = evaluate_frame(prepared, batch, frame, coherent)
        fresh = evaluate_frame(prepared, batch, frame)
        assert kept.names.tolist() == fresh.names.tolist()
        np.testing.assert_array_equal(kept.distances, fresh.distances)
        centers = centers + generator.normal(0.0, 0.05, centers.shape)
    assert coherent.rebuilds < 8


def crowd_samples(count: int, times: list[float]) -> tuple[list[ShapeBatch], list[str]]:
    """A seeded crowd of boxes, spheres and capsules moving and turning, at `times`."""
    generator = np.random.default_rng(8)
    scene = mixed_scene(generator, count)
    velocities = generator.uniform(-0.8, 0.8, (count, 3))
    spins = generator.uniform(-0.3, 0.3, count)
    samples = []
    for time in times:
        turns = np.array([rotation_z(spin * time) for spin in spins])
        samples.append(
            ShapeBatch(
                kinds=scene.kinds,
                centers=scene.centers + time * velocities,
                rotations=turns @ scene.rotations,
                half_extents=scene.half_extents,
                radii=scene.radii,
            )
        )
    return samples, [f"shape.{index:03d}" for index in range(count)]


@pytest.mark.parametrize(
    ("test_type", "tolerance"), [("hard", 0.0), ("touching", 0.05), ("clearance", 0.1)]
)
def test_intervals_take_the_samples_contacts_or_the_narrow_phase_alike(
    monkeypatch, test_type, tolerance
):
    # The sampled scan's own contacts at each sample spare the interval the narrow phase
    # there (all of it for a hard test); without them (a chunk's lookahead sample) the
    # narrow phase decides: the hits must be the same to the bit.
    samples, names = crowd_samples(150, [0.0, 1.0, 2.0])
    table = object_table([ObjectMetadata(name) for name in names])
    prepared = prepare_test(ClashTest("t", test_type=test_type, tolerance=tolerance), table)
    contacts = [sample_contacts(prepared, batch) for batch in samples]
    for batch, sampled in zip(samples, contacts, strict=True):
        alone, given = (
            evaluate_frame(prepared, batch, 1),
            evaluate_frame(prepared, batch, 1, sampled=sampled),
        )
        assert given.names.tolist() == alone.names.tolist()
        np.testing.assert_array_equal(given.distances, alone.distances)

    def intervals(with_contacts: bool) -> list[Interval]:
        return [
            Interval(
                samples[index],
                samples[index + 1],
                index + 1,
                (float(index + 1), float(index + 2)),
                *((contacts[index], contacts[index + 1]) if with_contacts else ()),
            )
            for index in range(2)
        ]

    narrow = evaluate_intervals(prepared, intervals(False))
    if test_type == "hard":
        # every pair a hard test can count at a sample is among its contacts
        monkeypatch.setattr(evaluate_module, "pair_intersects", None)
    reused = evaluate_intervals(prepared, intervals(True))
    assert sum(len(hits) for hits in narrow) > 3
    for expected, hits in zip(narrow, reused, strict=True):
        assert hits.names.tolist() == expected.names.tolist()
        np.testing.assert_array_equal(hits.tois, expected.tois)
        np.testing.assert_array_equal(hits.distances, expected.distances)


def test_a_pair_within_its_sweep_threshold_at_a_sample_beyond_its_contacts_is_not_swept():
    # A ball coming from 1000 units away has a sweep slack (its reach's contact epsilon,
    # about 1e-3) far above the end sample's epsilon (a few 1e-6): it comes within its
    # sweep threshold just before it ends 5e-4 beyond the clearance, outside the sample's
    # contacts. The narrow phase finds it within the threshold at the end sample, so the
    # interval leaves it to that sample (which reports no clash), as without contacts.
    _, start = spheres_scene(["ball", "post"], [[-1000, 2.1005, 0], [0, 0, 0]], [1, 1])
    table, end = spheres_scene(["ball", "post"], [[0, 2.1005, 0], [0, 0, 0]], [1, 1])
    prepared = prepare_test(ClashTest("t", test_type="clearance", tolerance=0.1), table)
    end_contacts = sample_contacts(prepared, end)
    assert not len(end_contacts.contacts.pairs)
    assert not len(evaluate_frame(prepared, end, 2))
    intervals = [
        Interval(start, end, 1, (1.0, 2.0)),
        Interval(start, end, 1, (1.0, 2.0), sample_contacts(prepared, start), end_contacts),
    ]
    assert [len(hits) for hits in evaluate_intervals(prepared, intervals)] == [0, 0]


def test_evaluate_frame_duplicates_and_ignore_rule():
    table = object_table(
        [ObjectMetadata("A", parent="P"), ObjectMetadata("B", parent="P"), ObjectMetadata("C")]
    )
    batch = ShapeBatch.boxes(np.zeros((3, 3)), np.stack([np.eye(3)] * 3), np.ones((3, 3)))
    hits = evaluate_frame(prepare_test(ClashTest("d", test_type="duplicates"), table), batch, 1)
    assert sorted(map(tuple, hits.names.tolist())) == [("A", "B"), ("A", "C"), ("B", "C")]
    ignoring = ClashTest("d", test_type="duplicates", ignore=IgnoreRules(same_parent=True))
    hits = evaluate_frame(prepare_test(ignoring, table), batch, 1)
    assert sorted(map(tuple, hits.names.tolist())) == [("A", "C"), ("B", "C")]
    with pytest.raises(ValueError, match="batch has 2 shapes"):
        evaluate_frame(prepare_test(ignoring, table), batch.take([0, 1]), 1)


def test_concat_hits():
    empty = concat_hits([])
    assert len(empty) == 0 and empty.names.shape == (0, 2) and empty.bounds.shape == (0, 2, 3)
    joined = concat_hits([make_hits([(1, "a", "b", -1.0)]), make_hits([(2, "c", "d", 0.0)])])
    assert joined.frames.tolist() == [1, 2]
    assert joined.names.tolist() == [["a", "b"], ["c", "d"]]


# --- Mesh mode ----------------------------------------------------------------------------

CUBE_VERTICES = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
CUBE_TRIANGLES = np.array(
    [
        [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
        [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
    ]
)  # fmt: skip


def placed(center, half) -> np.ndarray:
    """(4, 4) matrix scaling the unit cube [-1, 1]^3 by `half` and moving it to `center`."""
    matrix = np.diag([*half, 1.0])
    matrix[:3, 3] = center
    return matrix


def test_mesh_test_decides_proxy_candidates_on_triangles():
    # "ring": its proxy is a 3 m box, its mesh a cube frame we model as an open shell
    # around "pin"; "outer" holds "inner" wholly; "bare" has a proxy but no triangles.
    names = ["outer", "inner", "ring", "pin", "bare"]
    centers = [[0, 0, 0], [0, 0, 0], [10, 0, 0], [10, 0, 0], [10.5, 0, 0]]
    halves = [[1, 1, 1], [0.2, 0.2, 0.2], [1.5, 1.5, 1.5], [0.1, 0.1, 0.1], [0.3, 0.3, 0.3]]
    batch = ShapeBatch.boxes(centers, np.repeat(np.eye(3)[None], 5, axis=0), halves)
    table = object_table([ObjectMetadata(name) for name in names])
    cube = prepare_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    # The ring's mesh: two 0.2 m cubes at x = 8.6 and 11.4, inside its proxy box but far
    # from the pin: the proxies overlap, the meshes do not.
    ring = prepare_mesh(
        np.concatenate([CUBE_VERTICES * 0.2 - [1.4, 0, 0], CUBE_VERTICES * 0.2 + [1.4, 0, 0]]),
        np.concatenate([CUBE_TRIANGLES, CUBE_TRIANGLES + 8]),
    )
    meshes_by_row = [cube, cube, ring, cube, None]
    matrices = np.array([placed(c, h) for c, h in zip(centers, halves, strict=True)])
    matrices[2] = placed(centers[2], [1, 1, 1])
    asked: list[int] = []

    def mesh_of(row):
        asked.append(row)
        return meshes_by_row[row]

    frame_meshes = FrameMeshes(mesh_of, matrices)
    on_proxies = evaluate_frame(prepare_test(ClashTest("t", geometry="proxy"), table), batch, 1)
    # The pin ends at x = 10.1 and "bare" starts at 10.2: they do not meet.
    assert {tuple(pair) for pair in on_proxies.names.tolist()} == {
        ("inner", "outer"),
        ("pin", "ring"),
        ("bare", "ring"),
    }
    prepared = prepare_test(ClashTest("t", geometry="mesh"), table)
    hits = evaluate_frame(prepared, batch, 1, meshes=frame_meshes)
    found = {tuple(pair): row for row, pair in enumerate(hits.names.tolist())}
    # "bare" has no triangles: its pair is decided on the proxies, and says so.
    assert set(found) == {("inner", "outer"), ("bare", "ring")}
    inner = found["inner", "outer"]
    assert hits.on_mesh[inner] and hits.relations[inner] == A_INSIDE_B
    # The least move that takes the 0.2 m cube out of the 1 m one (two convex meshes).
    assert hits.distances[inner] == pytest.approx(-1.2)
    assert np.abs(hits.witnesses[inner, 0]) == pytest.approx([0.2] * 3)
    assert not hits.on_mesh[found["bare", "ring"]]
    assert hits.relations[found["bare", "ring"]] == PENETRATING
    assert 4 in asked and 0 in asked  # meshes asked for candidates only...
    assert len(hits.open_mesh_names) == 0  # ...and every asked mesh is closed

    proxy_only = evaluate_frame(prepared, batch, 1)  # without meshes: on the proxies
    assert not proxy_only.on_mesh.any() and len(proxy_only) == len(on_proxies)


def test_mesh_test_names_open_meshes_among_its_candidates():
    names = ["sheet", "chip", "far"]
    centers = [[0, 0, 0], [0, 0, 0], [9, 0, 0]]
    halves = [[1, 1, 0.01], [0.1, 0.1, 0.1], [0.1, 0.1, 0.1]]
    batch = ShapeBatch.boxes(centers, np.repeat(np.eye(3)[None], 3, axis=0), halves)
    sheet = prepare_mesh([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    cube = prepare_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    matrices = np.array([np.eye(4), placed(centers[1], halves[1]), placed(centers[2], halves[2])])
    frame_meshes = FrameMeshes([sheet, cube, cube].__getitem__, matrices)
    table = object_table([ObjectMetadata(name) for name in names])
    hits = evaluate_frame(prepare_test(ClashTest("t"), table), batch, 1, meshes=frame_meshes)
    assert hits.names.tolist() == [["chip", "sheet"]]
    assert hits.relations.tolist() == [CROSSING]
    assert hits.distances[0] == pytest.approx(-0.1)
    assert hits.open_mesh_names.tolist() == ["sheet"]


def undecided(pairs: np.ndarray) -> PairContacts:
    """Candidate `pairs` (k, 2) with zero proxy contacts, for `mesh_pair_contacts`."""
    return PairContacts(
        pairs=pairs,
        distances=np.zeros(len(pairs)),
        points_i=np.zeros((len(pairs), 3)),
        points_j=np.zeros((len(pairs), 3)),
        on_mesh=np.zeros(len(pairs), dtype=bool),
        relations=np.zeros(len(pairs), dtype=np.int8),
    )


def counted_mesh_calls(monkeypatch) -> list[int]:
    """The pairs each `mesh_contacts` call of evaluate decides from now on, as a list
    that grows with the calls."""
    tested: list[int] = []
    original = evaluate_module.mesh_contacts

    def counting(meshes, matrices, pairs, max_distance, progress=None, posed=None):
        tested.append(len(pairs))
        return original(meshes, matrices, pairs, max_distance, progress, posed)

    monkeypatch.setattr(evaluate_module, "mesh_contacts", counting)
    return tested


def test_mesh_pair_cache_reuses_only_pairs_whose_poses_did_not_change(monkeypatch):
    # A row of four unit cubes 1.5 apart (each overlaps its neighbours) and a fifth far
    # away; every pair is a candidate. With a cache, a second call with the same
    # matrices runs no triangle test, a move reruns only the moved cube's pairs, a larger
    # max_distance reruns all; the results are those computed afresh.
    cube = prepare_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    centers = np.array([[0, 0, 0], [1.5, 0, 0], [3, 0, 0], [4.5, 0, 0], [20, 0, 0]], float)
    pairs = all_pairs(len(centers))
    contacts = undecided(pairs)
    tested = counted_mesh_calls(monkeypatch)
    cache = MeshPairCache()

    def decide(centers, max_distance=1.0):
        frame_meshes = FrameMeshes(
            lambda row: cube, np.array([placed(c, [1] * 3) for c in centers])
        )
        tested.clear()
        cached, _ = mesh_pair_contacts(contacts, frame_meshes, max_distance, cache)
        count = sum(tested)
        fresh, _ = mesh_pair_contacts(contacts, frame_meshes, max_distance)
        # Pairs within max_distance as computed afresh; beyond it, beyond it.
        near = fresh.distances <= max_distance
        for name in ("distances", "points_i", "points_j", "relations", "on_mesh"):
            np.testing.assert_array_equal(getattr(cached, name)[near], getattr(fresh, name)[near])
        assert np.all(cached.distances[~near] > max_distance)
        return count, cached

    assert decide(centers)[0] == len(pairs)
    count, cached = decide(centers)
    assert count == 0
    assert cached.distances[0] == pytest.approx(-0.5)  # cubes 0 and 1 overlap 0.5 deep
    moved = centers.copy()
    moved[1] += [0.0, 0.25, 0.0]
    assert decide(moved)[0] == len(centers) - 1  # the pairs of cube 1
    assert decide(moved, max_distance=2.0)[0] == len(pairs)
    # Contacts computed farther out serve a smaller max_distance; cube 4 is 15.5 from
    # cube 3, beyond both.
    assert decide(moved, max_distance=0.5)[0] == 0


def test_a_live_cache_keeps_large_meshes_posed_and_a_scan_does_not(monkeypatch):
    # Live checks keep large meshes posed from one call to the next (a terrain under an
    # object dragged) once met at the same pose twice, not those that move at every
    # call; a report's scan poses each sample's meshes once and keeps none. Cubes count
    # as large here.
    monkeypatch.setattr(mesh_module, "_KEPT_POSED_TRIANGLES", 12)
    cube = prepare_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    contacts = undecided(all_pairs(3))
    live, scan = MeshPairCache(), MeshPairCache(scan=True)
    for step in range(3):
        centers = np.array([[1.5 * k, 0.0, 0.0] for k in range(3)])
        centers[0, 1] = 0.1 * step  # cube 0 moves, its pairs are decided again
        frame_meshes = FrameMeshes(
            lambda row: cube, np.array([placed(c, [1] * 3) for c in centers])
        )
        fresh, _ = mesh_pair_contacts(contacts, frame_meshes, 1.0)
        for cache in (live, scan):
            cached, _ = mesh_pair_contacts(contacts, frame_meshes, 1.0, cache)
            np.testing.assert_array_equal(cached.distances, fresh.distances)
        assert len(live.posed) == (0 if step == 0 else 2)  # the still cubes, once met
        assert len(scan.posed) == 0


def test_a_scan_cache_keeps_a_samples_calls_and_forgets_what_moved(monkeypatch):
    # Five cubes in a row 1.5 apart. In scan mode the contacts of every call of a sample
    # are kept (not only the last call's), a pair whose cubes kept their places is not
    # decided again at the next sample, and the poses of a cube that moves at every
    # sample are forgotten with their pairs, so the cache stays the size of two samples.
    cube = prepare_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    pairs = all_pairs(5)
    tested = counted_mesh_calls(monkeypatch)
    cache = MeshPairCache(scan=True)
    first, second = undecided(pairs[:4]), undecided(pairs[4:])
    for sample in range(6):
        centers = np.array([[1.5 * k, 0.0, 0.0] for k in range(5)])
        centers[4, 1] = 0.1 * sample  # cube 4 moves at every sample
        frame_meshes = FrameMeshes(
            lambda row: cube, np.array([placed(c, [1] * 3) for c in centers])
        )
        decided = 0
        for part in (first, second):
            tested.clear()
            cached, _ = mesh_pair_contacts(part, frame_meshes, 1.0, cache)
            decided += sum(tested)
            fresh, _ = mesh_pair_contacts(part, frame_meshes, 1.0)
            np.testing.assert_array_equal(cached.distances, fresh.distances)
        assert decided == (len(pairs) if sample == 0 else 4)  # then cube 4's pairs only
        cache.next_sample()
        assert len(cache.poses) == len(cache.kept) == 5 and len(cache.keys) == len(pairs)


def test_kept_mesh_contacts_decide_only_pairs_with_a_changed_object(monkeypatch):
    # Six cubes in a row 1.5 apart (neighbours overlap) and one without triangles (its
    # pairs stay decided on proxies). Over successive checks the kept contacts equal
    # mesh_pair_contacts' bit for bit, and only pairs with a moved object, with an
    # object whose proxy changed, or all pairs after a mesh changed (another version)
    # or under another margin reach it.
    cube = prepare_mesh(CUBE_VERTICES, CUBE_TRIANGLES)
    centers = np.array([[1.5 * k, 0.0, 0.0] for k in range(7)])
    pairs = all_pairs(len(centers))
    rng = np.random.default_rng(5)
    contacts = PairContacts(
        pairs=pairs,
        distances=rng.uniform(-0.5, 1.0, len(pairs)),
        points_i=rng.normal(size=(len(pairs), 3)),
        points_j=rng.normal(size=(len(pairs), 3)),
        on_mesh=np.zeros(len(pairs), dtype=bool),
        relations=np.zeros(len(pairs), dtype=np.int8),
    )
    decided: list[np.ndarray] = []
    original = evaluate_module.mesh_pair_contacts

    def counting(contacts, meshes, max_distance, cache=None, progress=None):
        decided.append(contacts.pairs)
        return original(contacts, meshes, max_distance, cache, progress)

    monkeypatch.setattr(evaluate_module, "mesh_pair_contacts", counting)
    kept = KeptMeshContacts()

    def check(centers, moved=(), version=0, margin=1.0):
        frame_meshes = FrameMeshes(
            lambda row: None if row == 6 else cube,
            np.array([placed(c, [1] * 3) for c in centers]),
            version,
        )
        proxy_changed = np.zeros(len(centers), dtype=bool)
        proxy_changed[list(moved)] = True
        decided.clear()
        found = kept.decide(contacts, frame_meshes, margin, proxy_changed)
        [asked] = decided
        expected, _ = original(contacts, frame_meshes, margin)
        for name in PairContacts.__dataclass_fields__:
            np.testing.assert_array_equal(getattr(found, name), getattr(expected, name))
        return {tuple(pair) for pair in asked.tolist()}

    everything = {tuple(pair) for pair in pairs.tolist()}
    assert check(centers) == everything
    assert check(centers) == set()
    moved = centers.copy()
    moved[2] += [0.0, 0.25, 0.0]
    assert check(moved) == {pair for pair in everything if 2 in pair}
    assert check(moved, moved=[4]) == {pair for pair in everything if 4 in pair}
    assert check(moved, version=1) == everything
    assert check(moved, version=1, margin=2.0) == everything
    assert check(moved, version=1, margin=2.0) == set()


@pytest.mark.parametrize(
    ("test_type", "tolerance", "geometry", "set_a"),
    [
        ("hard", 0.0, "proxy", Selector()),
        ("hard", 0.02, "mesh", Selector()),
        ("touching", 0.05, "proxy", Selector(name="shape.0*")),
        ("clearance", 0.1, "proxy", Selector()),
    ],
)
def test_one_swept_grid_serves_the_interval_and_the_later_samples_broad_phase(
    test_type, tolerance, geometry, set_a
):
    # A continuous scan looks for a sample's candidate pairs among its arriving
    # interval's (`interval_candidates`): the sample's contacts and the interval's hits
    # must be what their own grids give, to the bit (a mesh test's broad phase keeps
    # more than its sweep; set A of some objects leaves the others out).
    samples, names = crowd_samples(150, [0.0, 1.0, 2.0])
    table = object_table([ObjectMetadata(name) for name in names])
    test = ClashTest(
        "t",
        set_a=set_a,
        set_b=Selector(),
        test_type=test_type,
        tolerance=tolerance,
        geometry=geometry,
    )
    prepared = prepare_test(test, table)
    for start, end in itertools.pairwise(samples):
        arriving = interval_candidates(prepared, start, end)
        own, shared = (
            sample_contacts(prepared, end),
            sample_contacts(prepared, end, arriving=arriving),
        )
        assert len(own.contacts.pairs) > 10
        assert shared.margin == own.margin
        for field in ("pairs", "distances", "points_i", "points_j", "relations"):
            np.testing.assert_array_equal(
                getattr(shared.contacts, field), getattr(own.contacts, field)
            )
        alone = evaluate_intervals(prepared, [Interval(start, end, 1, (1.0, 2.0))])[0]
        given = evaluate_intervals(
            prepared, [Interval(start, end, 1, (1.0, 2.0), candidates=arriving)]
        )[0]
        assert given.names.tolist() == alone.names.tolist()
        np.testing.assert_array_equal(given.tois, alone.tois)
        np.testing.assert_array_equal(given.distances, alone.distances)


def test_points_of_no_size_take_part_in_no_pair():
    """A proxy of no size (an object scaled to zero on every axis, as Geometry Nodes
    instances are hidden, or a one-vertex mesh) at a wall's centre clashed on proxies,
    though it has no triangles to clash on meshes; a tiny one still takes part."""
    batch = ShapeBatch.concat(
        [
            ShapeBatch.boxes([[0.0, 0, 0]], [np.eye(3)], [[1.0, 1.0, 1.0]]),
            ShapeBatch.boxes([[0.0, 0, 0]], [np.eye(3)], [[0.0, 0.0, 0.0]]),
            ShapeBatch.spheres([[0.5, 0, 0]], [0.0]),
            ShapeBatch.boxes([[0.2, 0, 0]], [np.eye(3)], [[1e-9, 0.0, 0.0]]),
        ]
    )
    pairs = np.array([[0, 1], [0, 2], [0, 3], [1, 2]])
    assert vanished_pairs(batch, pairs).tolist() == [True, True, False, True]
