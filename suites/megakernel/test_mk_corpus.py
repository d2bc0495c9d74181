"""The validator against the oracle on the adversarial corpus."""

from harness.megakernel import corpus
from harness.megakernel.mutations import MUTATIONS


def test_corpus_holds_at_least_10000_schedules_from_every_source(mk_rows, mk_settings):
    sources = {r["source"] for r in mk_rows}
    assert len(mk_rows) >= 10_000 or mk_settings["size"] < 10_000
    assert sources == {"lowering", "single", "multi", "random"}


def test_every_fault_class_has_single_fault_mutants(mk_rows):
    classes = {}
    for row in mk_rows:
        if row["source"] == "single":
            classes[row["cls"]] = classes.get(row["cls"], 0) + 1
    assert len(classes) == len(MUTATIONS) >= 10
    assert min(classes.values()) >= len(mk_rows) // 100


def test_validator_never_accepts_a_schedule_the_oracle_faults(mk_rows):
    false_accepts = [r for r in mk_rows if r["accepted"] and not r["safe"]]
    assert not false_accepts, false_accepts[:3]


def test_validator_never_rejects_a_schedule_the_exhaustive_oracle_calls_safe(mk_rows):
    false_rejects = [r for r in mk_rows if not r["accepted"] and r["safe"] and r["mode"] == "exhaustive"]
    assert not false_rejects, false_rejects[:3]


def test_every_disagreement_on_the_sampled_part_is_explained_by_a_replayed_witness(mk_rows):
    disagreements = [r for r in mk_rows if r["accepted"] != r["safe"]]
    assert all(r["mode"] == "sampled" and r["explanation"]["resolved"] for r in disagreements), disagreements[:3]


def test_oracle_settles_most_of_the_corpus_exhaustively_and_samples_the_rest(mk_rows):
    modes = {}
    for row in mk_rows:
        modes[row["mode"]] = modes.get(row["mode"], 0) + 1
    assert modes.get("sampled", 0) > 0
    assert modes.get("exhaustive", 0) + modes.get("structural", 0) >= 0.9 * len(mk_rows)


def test_corpus_mixes_safe_and_unsafe_schedules_in_the_mutant_classes(mk_rows):
    safe_mutants = [r for r in mk_rows if r["source"] == "single" and r["safe"]]
    unsafe_lowerings = [r for r in mk_rows if r["source"] == "lowering" and not r["safe"]]
    assert safe_mutants and not unsafe_lowerings


def test_corpus_is_deterministic_by_seed(mk_settings):
    seed, size = mk_settings["seed"], mk_settings["size"]
    first = corpus.digest(corpus.build_chunk(seed, size, 5))
    assert first == corpus.digest(corpus.build_chunk(seed, size, 5))
    assert first != corpus.digest(corpus.build_chunk(seed + 1, size, 5))
