"""The HTML run viewer: the page's content and safety, and a real headless Chromium rendering it.

Run directories are written record by record with ``StepLogWriter``: a CreativityBench interactive
run (inspections, one observation stored by hash, an entity-only answer), a BrainTeaser run and a
SPLAT run whose story holds ``</script><b>x</b>`` and which has an errored and an unfinished episode.
The browser tests use Debian's ``chromium``; they install it once when missing (as root) and skip
only when that fails.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import zlib
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from _outcomes import outcome as full_outcome

from lateralgym.episodes._log import (
    INLINE_LIMIT,
    EpisodeEnd,
    EpisodeStart,
    LLMBlock,
    StepLine,
    StepLogWriter,
    observation,
)
from lateralgym.episodes._viewer import VIEWER_FILE, ViewerError, embed_json, write_viewer

EVIL = "</script><b>x</b><!--<script>"
"""Dataset text that would break out of an unescaped script tag."""
STORY = f"TITLE: The Quiet Concert\nSTORY: Nobody heard a note. {EVIL}"
SCENE = "TASK: open a stuck paint tin.\nENTITIES AROUND YOU: steel soup spoon; cotton tea towel; bamboo board\n"
BIG_REPLY = "steel soup spoon:\n" + "  - handle: stainless steel, flat, rigid\n" * (INLINE_LIMIT // 30)
DATA_TAG = re.compile(r'<script type="application/json" id="lateralgym-data">(.*?)</script>', re.DOTALL)


def _write_run(run_dir: Path, benchmark: str, episodes: list[dict[str, Any]], *, manifest: bool = True) -> Path:
    """Write a run directory: each episode dict gives item, meta, first observation, steps, outcome, error."""
    run_id = run_dir.name
    with StepLogWriter(run_dir / "steps.jsonl") as writer:
        for k, ep in enumerate(episodes):
            ids = {"run_id": run_id, "episode_id": f"{ep['item']}#0", "item_id": ep["item"]}
            writer.write(
                EpisodeStart(
                    **ids,
                    seed=k,
                    config=benchmark,
                    benchmark=benchmark,
                    mode=ep.get("mode", "default"),
                    player="heuristic",
                    judge="offline",
                    observation=observation(ep["first"], run_dir),
                    meta=ep["meta"],
                )
            )
            seen = ep["first"]
            for turn, (action, reply, label, reward) in enumerate(ep.get("steps", []), start=1):
                last = turn == len(ep["steps"]) and "error" not in ep
                writer.write(
                    StepLine(
                        **ids,
                        step=turn,
                        action=action,
                        valid=action["kind"] != "invalid",
                        observation=observation(seen, run_dir),
                        reply=observation(reply, run_dir),
                        reward=reward,
                        judge_label=label,
                        terminated=last and ep.get("outcome") is not None,
                        llm=ep.get("llm"),
                    )
                )
                seen = reply
            if ep.get("unfinished"):
                continue
            writer.write(
                EpisodeEnd(
                    **ids,
                    benchmark=benchmark,
                    outcome=full_outcome(benchmark, ep["outcome"], turns=len(ep.get("steps", [])))
                    if ep.get("outcome")
                    else None,
                    meta=ep["meta"],
                    reward=sum(s[3] for s in ep.get("steps", [])),
                    terminated="error" not in ep,
                    error=ep.get("error"),
                )
            )
    if manifest:
        data = {
            "run_id": run_id,
            "config": f"{benchmark}-test",
            "benchmark": benchmark,
            "player": "heuristic",
            "judge": "offline",
            "seed": 0,
            "repeats": 1,
        }
        (run_dir / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    (run_dir / "config.yaml").write_text(f"name: {benchmark}-test\nbenchmark: {benchmark}\n", encoding="utf-8")
    return run_dir


def _creativity_outcome(
    inspected: list[str], gold: bool, entity: bool, answer: dict[str, str] | None
) -> dict[str, Any]:
    return {
        "committed": answer is not None,
        "answer": answer,
        "gold_correct": gold,
        "entity_correct": entity,
        "hallucinated": False,
        "inspections": len(inspected),
        "inspected": inspected,
        "gold_inspected": "steel soup spoon" in inspected,
        "entity_count": 3,
        "asks": 0,
        "scene": "kitchen",
    }


@pytest.fixture
def creativity_run(tmp_path: Path) -> Path:
    def meta(similarity: str, count: int) -> dict[str, Any]:
        return {
            "scene": "kitchen",
            "cluster_band": "small",
            "gold_level": 2,
            "distractor_count": count,
            "distractor_similarity": similarity,
        }

    answer = {"entity": "steel soup spoon", "part": "handle", "how_to_use": "lever the lid up with the handle"}
    llm = LLMBlock(model="openai:gpt-test", text='{"kind": "inspect"}', prompt_tokens=12, completion_tokens=4)
    return _write_run(
        tmp_path / "creativity-run",
        "creativity",
        [
            {
                "item": "t-paint-lid",
                "meta": meta("mixed", 2),
                "first": SCENE,
                "mode": "interactive",
                "llm": llm,
                "steps": [
                    ({"kind": "inspect", "entity": "cotton tea towel"}, "cotton tea towel: cloth_body", None, 0.0),
                    ({"kind": "inspect", "entity": "steel soup spoon"}, BIG_REPLY, None, 0.0),
                    ({"kind": "commit", **answer}, "Answer recorded. Result: correct", "correct", 1.0),
                ],
                "outcome": _creativity_outcome(["cotton tea towel", "steel soup spoon"], True, True, answer),
            },
            {
                "item": "t-board",
                "meta": meta("similar", 4),
                "first": SCENE,
                "mode": "interactive",
                "steps": [
                    ({"kind": "invalid", "raw": "hmm", "reason": "no action"}, "Not an action.", None, 0.0),
                    ({"kind": "commit", **answer, "part": "bowl"}, "Result: entity only", "entity", 0.0),
                ],
                "outcome": _creativity_outcome([], False, True, {**answer, "part": "bowl"}),
            },
        ],
    )


@pytest.fixture
def brainteaser_run(tmp_path: Path) -> Path:
    question = "QUESTION: A pilot flew for hours yet never left the ground. How?\nCHOICES:\nA. A simulator."
    return _write_run(
        tmp_path / "brainteaser-run",
        "brainteaser",
        [
            {
                "item": "SP-1",
                "meta": {"group_id": "SP-1", "kind": "sentence", "variant": "original"},
                "first": question,
                "steps": [({"kind": "commit", "choice": 0}, "Answer recorded.", "correct", 1.0)],
                "outcome": {
                    "committed": True,
                    "choice": 0,
                    "correct": True,
                    "group_id": "SP-1",
                    "kind": "sentence",
                    "variant": "original",
                },
            },
            {
                "item": "WP-2_SR",
                "meta": {"group_id": "WP-2", "kind": "word", "variant": "semantic"},
                "first": question,
                "steps": [({"kind": "commit", "choice": 2}, "Answer recorded.", "wrong", 0.0)],
                "outcome": {
                    "committed": True,
                    "choice": 2,
                    "correct": False,
                    "group_id": "WP-2",
                    "kind": "word",
                    "variant": "semantic",
                },
            },
        ],
    )


@pytest.fixture
def splat_run(tmp_path: Path) -> Path:
    def outcome(solved: bool, questions: int) -> dict[str, Any]:
        return {
            "solved": solved,
            "questions": questions,
            "yes": questions,
            "no": 0,
            "irrelevant": 0,
            "repeated_questions": 0,
            "attempts": 1,
            "difficulty": 2,
            "band": "easy",
        }

    return _write_run(
        tmp_path / "splat-run",
        "splat",
        [
            {
                "item": "sp-quiet",
                "meta": {"title": "The Quiet Concert", "difficulty": 2, "band": "easy"},
                "first": STORY,
                "steps": [
                    ({"kind": "ask", "question": f"Was it a film? {EVIL}"}, "yes", "yes", 0.0),
                    ({"kind": "commit", "answer": "A silent film."}, "Solved!", "correct", 1.0),
                ],
                "outcome": outcome(True, 1),
            },
            {
                "item": "sp-crash",
                "meta": {"title": "Crash", "difficulty": 8, "band": "hard"},
                "first": "STORY: crash",
                "steps": [({"kind": "ask", "question": "Was it night?"}, "no", "no", 0.0)],
                "error": "APIError: the server answered 500; retry the run with --resume",
            },
            {
                "item": "sp-killed",
                "meta": {"title": "Killed", "difficulty": 5, "band": "medium"},
                "first": "STORY: k",
                "steps": [({"kind": "ask", "question": "Is it a trick?"}, "irrelevant", "irrelevant", 0.0)],
                "unfinished": True,
            },
        ],
    )


def _embedded(page: str) -> dict[str, Any]:
    match = DATA_TAG.search(page)
    assert match is not None, "the page has no embedded data tag"
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def _episode(data: dict[str, Any], episode_id: str) -> dict[str, Any]:
    return next(e for e in data["episodes"] if e["id"] == episode_id)


# --- the page as written -----------------------------------------------------------------------


@pytest.mark.parametrize("run", ["creativity_run", "brainteaser_run", "splat_run"])
def test_page_is_self_contained(run: str, request: pytest.FixtureRequest) -> None:
    run_dir: Path = request.getfixturevalue(run)
    page = write_viewer(run_dir).read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.IGNORECASE)
    assert not re.search(r"<link\b|<script[^>]*\bsrc=|@import|url\(", page, re.IGNORECASE)
    assert "http://" not in page and "https://" not in page
    assert page.count("<script") == 2 and page.count("</script>") == 2


def test_embedded_json_escapes_script_breakouts(splat_run: Path) -> None:
    page = write_viewer(splat_run).read_text(encoding="utf-8")
    assert EVIL not in page and "<b>x</b>" not in page
    data_text = DATA_TAG.search(page)
    assert data_text is not None and "<" not in data_text.group(1) and ">" not in data_text.group(1)
    data = _embedded(page)
    episode = _episode(data, "sp-quiet#0")
    assert data["texts"][episode["observation"]] == STORY
    assert episode["steps"][0]["action"]["question"].endswith(EVIL)
    assert json.loads(embed_json({"s": EVIL + "&"})) == {"s": EVIL + "&"}


def test_creativity_episodes_carry_steps_inspections_and_hashed_observations(creativity_run: Path) -> None:
    assert any((creativity_run / "observations").iterdir()), "the big reply should be stored by hash"
    data = _embedded(write_viewer(creativity_run).read_text(encoding="utf-8"))
    first = _episode(data, "t-paint-lid#0")
    assert [s["action"]["kind"] for s in first["steps"]] == ["inspect", "inspect", "commit"]
    assert data["texts"][first["steps"][1]["reply"]] == BIG_REPLY
    assert first["outcome"]["inspected"] == ["cotton tea towel", "steel soup spoon"]
    assert first["steps"][0]["llm"]["prompt_tokens"] == 12
    assert (first["status"], first["badge"]) == ("correct", "correct")
    assert (_episode(data, "t-board#0")["status"], _episode(data, "t-board#0")["badge"]) == ("wrong", "entity only")
    assert data["factors"]["distractor_similarity"] == ["mixed", "similar"]
    assert data["factors"]["distractor_count"] == [2, 4]
    assert {"cluster_band", "gold_level", "scene"} <= set(data["factors"])
    assert data["header"]["run_id"] == "creativity-run" and data["header"]["player"] == "heuristic"
    assert "benchmark: creativity" in data["config_yaml"]
    assert data["summary"]["line"].startswith("2 episodes")
    assert "gold_correct_rate 50.0" in data["summary"]["line"]
    assert "entity_correct_rate 100.0" in data["summary"]["line"]


def test_puzzle_statuses_factors_and_summary(brainteaser_run: Path, splat_run: Path) -> None:
    teaser = _embedded(write_viewer(brainteaser_run).read_text(encoding="utf-8"))
    assert [e["status"] for e in teaser["episodes"]] == ["correct", "wrong"]
    assert teaser["factors"]["kind"] == ["sentence", "word"]
    assert teaser["factors"]["variant"] == ["original", "semantic"]
    assert "overall_acc" in teaser["summary"]["line"]

    splat = _embedded(write_viewer(splat_run).read_text(encoding="utf-8"))
    assert [(e["status"], e["badge"]) for e in splat["episodes"]] == [
        ("correct", "solved"),
        ("errored", "errored"),
        ("unfinished", "unfinished"),
    ]
    assert splat["factors"]["band"] == ["easy", "hard", "medium"]
    assert "title" not in splat["factors"]
    assert _episode(splat, "sp-crash#0")["error"].startswith("APIError")
    line = splat["summary"]["line"]
    assert line.startswith("3 episodes") and "1 errored" in line and "1 unfinished" in line and "acc 50.0" in line


def test_max_episodes_out_path_and_missing_manifest(tmp_path: Path, splat_run: Path) -> None:
    out = write_viewer(splat_run, out=tmp_path / "pages" / "one.html", max_episodes=1)
    assert out == tmp_path / "pages" / "one.html" and not (splat_run / VIEWER_FILE).exists()
    data = _embedded(out.read_text(encoding="utf-8"))
    assert [e["id"] for e in data["episodes"]] == ["sp-quiet#0"]
    assert data["summary"]["line"].startswith("3 episodes (1 shown)")

    bare = _write_run(tmp_path / "bare", "brainteaser", [{"item": "SP-9", "meta": {}, "first": "Q"}], manifest=False)
    assert write_viewer(bare) == bare / VIEWER_FILE
    header = _embedded((bare / VIEWER_FILE).read_text(encoding="utf-8"))["header"]
    assert header == {
        "run_id": "bare",
        "config": "brainteaser",
        "benchmark": "brainteaser",
        "mode": "default",
        "player": "heuristic",
        "judge": "offline",
    }


def test_a_directory_without_a_log_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ViewerError, match="no steps.jsonl"):
        write_viewer(tmp_path)


def test_a_real_run_renders(tmp_path: Path) -> None:
    from _items import PAINT_TASK

    from lateralgym.episodes._runner import run

    result = run("creativity-interactive", player="heuristic", items=[PAINT_TASK], out=tmp_path, progress=False)
    data = _embedded(write_viewer(result.run_dir).read_text(encoding="utf-8"))
    (episode,) = data["episodes"]
    assert episode["steps"] and episode["steps"][-1]["action"]["kind"] == "commit"
    assert episode["outcome"]["inspected"] and data["header"]["run_id"] == result.run_id


# --- a real browser ----------------------------------------------------------------------------


@cache
def _find_chromium() -> tuple[str | None, str]:
    """Debian's chromium, installed once when missing (root only), or None and why not."""
    found = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if found:
        return found, ""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None, "chromium is not installed and this is not a root Debian machine: `apt-get install chromium`"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    # A stale package list is the usual reason an install fails: update once, then retry.
    for commands in ([install], [["apt-get", "update"], install]):
        try:
            if all(subprocess.run(c, env=env, capture_output=True, timeout=900).returncode == 0 for c in commands):
                break
        except subprocess.TimeoutExpired:
            continue
    found = shutil.which("chromium")
    return found, "" if found else "`apt-get install -y chromium` failed, even after `apt-get update`"


@pytest.fixture(scope="module")
def chromium() -> str:
    found, why = _find_chromium()
    if found is None:
        pytest.skip(why)
    return found


def _browse(chromium: str, tmp_path: Path, page: Path, *args: str, fragment: str = "") -> str:
    profile = tmp_path / f"profile-{time.monotonic_ns()}"
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
        page.resolve().as_uri() + fragment,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class _DomIndex(HTMLParser):
    """Elements by tag with their attributes, and the text directly inside ``<b>`` elements."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.bold_text: list[str] = []
        self._tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        self._tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._tags:
            del self._tags[len(self._tags) - 1 - self._tags[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if self._tags and self._tags[-1] == "b":
            self.bold_text.append(data)

    def having(self, tag: str, cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and cls in a.get("class", "").split()]


def _dom(markup: str) -> _DomIndex:
    index = _DomIndex()
    index.feed(markup)
    return index


def _inspected_chips(dump: str) -> list[str]:
    """The rendered inspected-entity chips, in order."""
    block = re.search(r'<div class="chips inspected">(.*?)</div>', dump, re.DOTALL)
    return re.findall(r'<span class="chip">(.*?)</span>', block.group(1)) if block else []


@pytest.mark.parametrize(
    ("run", "episode_ids", "first_steps"),
    [
        ("creativity_run", ["t-paint-lid#0", "t-board#0"], 3),
        ("brainteaser_run", ["SP-1#0", "WP-2_SR#0"], 1),
        ("splat_run", ["sp-quiet#0", "sp-crash#0", "sp-killed#0"], 2),
    ],
)
def test_chromium_renders_the_list_and_the_first_episode(
    chromium: str, tmp_path: Path, request: pytest.FixtureRequest, run: str, episode_ids: list[str], first_steps: int
) -> None:
    page = write_viewer(request.getfixturevalue(run))
    dom = _dom(_browse(chromium, tmp_path, page, "--dump-dom"))
    listed = dom.having("li", "episode")
    assert [a["data-id"] for a in listed] == episode_ids
    assert "selected" in listed[0]["class"]
    assert [a["data-step"] for a in dom.having("li", "step")] == [str(n) for n in range(1, first_steps + 1)]
    assert any(a.get("id") == "outcome-table" for _, a in dom.elements)
    # Story and question text hold "<b>x</b>": rendered as text, it must not become an element.
    assert "x" not in dom.bold_text


def test_chromium_shows_inspections_and_the_errored_episode(
    chromium: str, tmp_path: Path, creativity_run: Path, splat_run: Path
) -> None:
    dump = _browse(chromium, tmp_path, write_viewer(creativity_run), "--dump-dom")
    assert _inspected_chips(dump) == ["cotton tea towel", "steel soup spoon"]
    dump = _browse(chromium, tmp_path, write_viewer(splat_run), "--dump-dom", fragment="#sp-crash%230")
    dom = _dom(dump)
    assert [a["data-id"] for a in dom.having("li", "episode") if "selected" in a["class"]] == ["sp-crash#0"]
    assert dom.having("div", "error") and "APIError: the server answered 500" in dump


DRIVER = """<script>
// Drives the page like a person, and writes what it saw after each action into #driver-result.
const seen = {};
const buttons = () => document.querySelectorAll("#main .stepbar button");
const mark = (li) => li.dataset.step + (li.classList.contains("current") ? "*" : "");
const steps = () => [...document.querySelectorAll("#steps li.step")].map(mark);
const listed = () => [...document.querySelectorAll("#episodes li.episode")].map((li) => li.dataset.id);
const change = (node, value) => {
  node.value = value;
  node.dispatchEvent(new Event(node.tagName === "INPUT" ? "input" : "change"));
};
buttons()[1].click(); seen.next = steps();
buttons()[1].click(); seen.next2 = steps();
seen.nextDisabled = buttons()[1].disabled;
buttons()[0].click(); seen.prev = steps();
document.querySelector("#main .stepbar input").click(); seen.all = steps();
change(document.getElementById("outcome"), "errored"); seen.errored = listed();
change(document.getElementById("outcome"), "all");
change(document.querySelector('#factors select[data-key="band"]'), "medium"); seen.medium = listed();
change(document.querySelector('#factors select[data-key="band"]'), "");
change(document.getElementById("q"), "QUIET concert"); seen.text = listed();
change(document.getElementById("q"), "");
document.querySelector('#episodes li[data-id="sp-killed#0"]').click();
seen.killed = document.querySelector("#main h2").textContent;
const out = document.createElement("pre");
out.id = "driver-result";
out.textContent = JSON.stringify(seen);
document.body.append(out);
</script>
</body>"""


def test_chromium_steps_through_turns_and_filters(chromium: str, tmp_path: Path, splat_run: Path) -> None:
    page = write_viewer(splat_run)
    driven = tmp_path / "driven.html"
    driven.write_text(page.read_text(encoding="utf-8").replace("</body>", DRIVER), encoding="utf-8")
    dump = _browse(chromium, tmp_path, driven, "--dump-dom")
    match = re.search(r'<pre id="driver-result">(.*?)</pre>', dump, re.DOTALL)
    assert match is not None, "the page's script failed before the driver finished"
    seen = json.loads(html.unescape(match.group(1)))
    assert seen["next"] == ["1*"] and seen["next2"] == ["1", "2*"] and seen["nextDisabled"] is True
    assert seen["prev"] == ["1*"] and seen["all"] == ["1", "2"]
    assert seen["errored"] == ["sp-crash#0"] and seen["medium"] == ["sp-killed#0"] and seen["text"] == ["sp-quiet#0"]
    assert seen["killed"] == "sp-killed#0"


def test_chromium_screenshot(chromium: str, tmp_path: Path, creativity_run: Path) -> None:
    shot = tmp_path / "viewer.png"
    _browse(chromium, tmp_path, write_viewer(creativity_run), f"--screenshot={shot}", "--window-size=1280,900")
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1280, 900)
    idat, at = b"", 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        if png[at + 4 : at + 8] == b"IDAT":
            idat += png[at + 8 : at + 8 + length]
        at += 12 + length
    pixels = zlib.decompress(idat)
    assert len(set(pixels)) > 50, "the screenshot is blank"
    assert len(png) > 20_000


def test_chromium_shows_each_questions_process_reward_and_the_episodes_recall(chromium: str, tmp_path: Path) -> None:
    from _arbench_release import write_release

    from lateralgym.envs import EpisodeConfig
    from lateralgym.envs.benchmarks.arbench import load_arbench
    from lateralgym.episodes._runner import run

    config = EpisodeConfig.named("arbench-sp").with_options(reward="dense")
    puzzles = load_arbench(write_release(tmp_path))[2:]  # the story that lists a key question twice
    result = run(config, items=puzzles, player="oracle", out=tmp_path / "runs", progress=False)
    dump = _browse(chromium, tmp_path, write_viewer(result.run_dir), "--dump-dom")
    chips = [html.unescape(c) for c in re.findall(r'<span class="chip process">(.*?)</span>', dump)]
    assert chips == [
        "process +0.167, new key fact 1",
        "process +0.333, new key fact 2, 6",
        "process +0.167, new key fact 3",
        "process +0.167, new key fact 4",
        "process +0.167, new key fact 5",
        "process -0.083, repeats step 2",
    ]
    assert "process reward (reward: dense)" in dump and "1.000 (6 of 6)" in dump and "+0.917" in dump
