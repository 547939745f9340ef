"""The viewer of a big run, page by page: the index and first page inline, later pages as scripts.

Runs are written record by record with ``StepLogWriter`` (SPLAT episodes, some interleaved as a
concurrent run writes them, one unfinished, one whose story tries to break out of the page). The
browser tests drive the real page in headless Chromium from ``file://``: they turn the list's
pages, open an episode whose data is on a later page file, and search for a story on a page not
loaded yet.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _outcomes import outcome as full_outcome
from test_viewer import _browse, _dom, _embedded, chromium  # noqa: F401 - chromium is a fixture

from lateralgym.cli import main
from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, StepLine, StepLogWriter, observation, read_log
from lateralgym.episodes._viewer import VIEWER_FILE, write_viewer
from lateralgym.episodes._viewer_pages import EpisodePages, pages_dir_for

BREAKOUT = '</script><script>document.title="PWNED"</script><img src=x onerror="document.title=\'PWNED\'"><b>x</b>'
"""Story text that would run code if any part of the viewer put it into markup."""


def _records(run_id: str, k: int, story: str, *, end: bool = True) -> list[EpisodeStart | StepLine | EpisodeEnd]:
    """One SPLAT episode: a start, one question, and (unless unfinished) a solved end."""
    ids = {"run_id": run_id, "episode_id": f"sp-{k:03d}#0", "item_id": f"sp-{k:03d}"}
    meta = {"title": f"Story {k}", "band": ["easy", "medium", "hard"][k % 3]}
    records: list[EpisodeStart | StepLine | EpisodeEnd] = [
        EpisodeStart(
            **ids,
            seed=k,
            config="splat",
            benchmark="splat",
            mode="default",
            player="heuristic",
            judge="offline",
            observation=observation(story, None),
            meta=meta,
        ),
        StepLine(
            **ids,
            step=1,
            action={"kind": "ask", "question": f"Is it story {k}?"},
            valid=True,
            observation=observation(story, None),
            reply=observation("yes", None),
            reward=0.0,
            judge_label="yes",
        ),
    ]
    if end:
        outcome = full_outcome("splat", {"solved": k % 2 == 0, "questions": 1, "yes": 1}, turns=1)
        records.append(EpisodeEnd(**ids, benchmark="splat", outcome=outcome, meta=meta, reward=0.0, terminated=True))
    return records


def _story(k: int) -> str:
    return f"STORY {k}: the lighthouse keeper number {k} " + ("kept every lamp dark." if k != 77 else "met a walrus.")


def _write_run(run_dir: Path, count: int, *, unfinished: int | None = None, evil: int | None = None) -> Path:
    """A SPLAT run of ``count`` episodes in order, ``unfinished`` without an end, ``evil`` with BREAKOUT."""
    with StepLogWriter(run_dir / "steps.jsonl") as writer:
        for k in range(count):
            story = _story(k) + (BREAKOUT if k == evil else "")
            for record in _records(run_dir.name, k, story, end=k != unfinished):
                writer.write(record)
    (run_dir / "config.yaml").write_text("name: splat-test\nbenchmark: splat\n", encoding="utf-8")
    return run_dir


def _page_file(path: Path) -> tuple[int, dict[str, Any]]:
    match = re.fullmatch(r"lateralgymPage\((\d+),(.*)\);\n", path.read_text(encoding="ascii"), re.DOTALL)
    assert match is not None, f"{path} is not a page script"
    return int(match.group(1)), json.loads(match.group(2))


def test_episodes_past_the_first_page_go_to_page_files_in_log_order(tmp_path: Path) -> None:
    run_dir = _write_run(tmp_path / "run", 11, unfinished=1, evil=9)
    page = write_viewer(run_dir, page_size=3)
    data = _embedded(page.read_text(encoding="utf-8"))
    files = sorted(pages_dir_for(page).iterdir())
    assert [f.name for f in files] == ["page-00001.js", "page-00002.js", "page-00003.js"] and data["pages"] == 4
    pages = {0: data, **dict(_page_file(f) for f in files)}
    # The index lists every episode in log order, each once, with the page that holds it.
    assert [row[0] for row in data["index"]] == [f"sp-{k:03d}#0" for k in range(11)]
    for n, (episode_id, item, status, badge, _reward, steps, number, meta) in enumerate(data["index"]):
        (episode,) = [e for e in pages[number]["episodes"] if e["id"] == episode_id]
        assert (episode["n"], episode["item"], episode["status"], episode["badge"]) == (n, item, status, badge)
        assert len(episode["steps"]) == steps and episode["meta"] == meta
        assert pages[number]["texts"][episode["observation"]] == _story(n) + (BREAKOUT if n == 9 else "")
    # A page holds the episodes as they end; the unfinished one is on the last page.
    assert [e["id"] for e in data["episodes"]] == ["sp-000#0", "sp-002#0", "sp-003#0"]
    assert data["index"][1][2] == "unfinished" and data["index"][1][6] == 3
    assert data["summary"]["line"].startswith("11 episodes") and "1 unfinished" in data["summary"]["line"]
    assert data["factors"]["band"] == ["easy", "hard", "medium"] and "title" not in data["factors"]
    # Logged text cannot end a script or open a tag in a page file.
    evil_file = files[data["index"][9][6] - 1].read_text(encoding="ascii")
    assert "<" not in evil_file and ">" not in evil_file and "&" not in evil_file


def test_a_rewrite_replaces_stale_pages_and_a_one_page_run_has_no_folder(tmp_path: Path) -> None:
    run_dir = _write_run(tmp_path / "run", 7)
    page = write_viewer(run_dir, page_size=2)
    folder = pages_dir_for(page)
    assert folder == run_dir / "viewer-pages" and len(list(folder.iterdir())) == 3
    write_viewer(run_dir, page_size=4)
    assert [f.name for f in folder.iterdir()] == ["page-00001.js"]
    write_viewer(run_dir)
    assert not folder.exists()
    data = _embedded((run_dir / VIEWER_FILE).read_text(encoding="utf-8"))
    assert data["pages"] == 1 and len(data["episodes"]) == len(data["index"]) == 7


def test_pages_are_written_while_the_log_is_read(tmp_path: Path) -> None:
    """Interleaved episodes (a concurrent run): a page is on disk once it is full, before the log ends."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    folder = run_dir / "viewer-pages"
    pages = EpisodePages(run_dir, folder, {}, page_size=2)
    streams = [_records("run", k, _story(k)) for k in range(6)]
    order = [streams[k][i] for i in range(3) for k in range(6)]  # every start, then every step, then every end
    for record in order[:-2]:  # 4 episodes ended: pages 0 (kept for the HTML) and 1 (written) are full
        pages.add(record)
    assert [f.name for f in folder.iterdir()] == ["page-00001.js"]
    assert [e["id"] for e in _page_file(folder / "page-00001.js")[1]["episodes"]] == ["sp-002#0", "sp-003#0"]
    for record in order[-2:]:
        pages.add(record)
    data = pages.finish()
    assert data["pages"] == 3 and [row[6] for row in data["index"]] == [0, 0, 1, 1, 2, 2]
    assert [row[0] for row in data["index"]] == [f"sp-{k:03d}#0" for k in range(6)]


def test_max_episodes_counts_across_pages(tmp_path: Path) -> None:
    run_dir = _write_run(tmp_path / "run", 9)
    data = _embedded(write_viewer(run_dir, max_episodes=5, page_size=2).read_text(encoding="utf-8"))
    assert [row[0] for row in data["index"]] == [f"sp-{k:03d}#0" for k in range(5)]
    assert data["pages"] == 3 and data["summary"]["line"].startswith("9 episodes (5 shown)")


# --- a real browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """230 episodes at 50 per page: 5 pages, 3 pages of the list; episode 203 tries to break out."""
    run_dir = _write_run(tmp_path_factory.mktemp("big") / "run", 230, evil=203)
    write_viewer(run_dir, page_size=50)
    return run_dir


DRIVER = """<script>
// Drives the page like a person; waits for page files to load; writes what it saw into #driver-result.
const seen = {};
const listed = () => [...document.querySelectorAll("#episodes li.episode")].map((li) => li.dataset.id);
const until = async (test) => {
  for (let i = 0; i < 200 && !test(); i += 1) await new Promise((r) => setTimeout(r, 25));
};
const heading = () => document.querySelector("#main h2").textContent;
const story = () => document.querySelector("#main .first-observation")?.textContent;
const type = (value) => {
  const q = document.getElementById("q");
  q.value = value;
  q.dispatchEvent(new Event("input"));
};
(async () => {
  seen.first = [listed().length, listed()[0], document.getElementById("list-range").textContent];
  document.querySelector('#episodes li[data-id="sp-099#0"]').click();
  document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown" }));  // past the list's page
  await until(() => story() !== undefined && heading() === "sp-100#0");
  const selected = [...document.querySelectorAll("#episodes li.selected")].map((li) => li.dataset.id);
  seen.down = [document.getElementById("list-range").textContent, selected, heading(), story()];
  type("sp-16");
  seen.prefix = listed();  // at once, from the index: page 3, which holds them, is not loaded yet
  type("");
  document.getElementById("list-next").click();
  document.getElementById("list-next").click();
  seen.third = [listed().length, listed()[0], document.getElementById("list-next").disabled];
  document.querySelector('#episodes li[data-id="sp-203#0"]').click();
  await until(() => story() !== undefined);
  seen.evil = [heading(), story(), document.title];
  seen.images = document.querySelectorAll("#main img").length;
  document.querySelector('#episodes li[data-id="sp-229#0"]').click();
  await until(() => story() !== undefined);
  seen.last = [heading(), story()];
  type("walrus");
  await until(() => !document.getElementById("count").textContent.includes("searching"));
  seen.walrus = [listed(), document.getElementById("count").textContent];
  type("Story 7");
  seen.title = listed();
  const out = Object.assign(document.createElement("pre"), { id: "driver-result", textContent: JSON.stringify(seen) });
  document.body.append(out);
})();
</script>
</body>"""


def test_chromium_turns_pages_opens_a_later_page_and_searches_all_pages(
    chromium: str,  # noqa: F811 - the fixture
    tmp_path: Path,
    big_run: Path,
) -> None:
    page = big_run / VIEWER_FILE
    driven = big_run / "driven.html"  # next to the page: the page files are found relative to it
    driven.write_text(page.read_text(encoding="utf-8").replace("</body>", DRIVER), encoding="utf-8")
    dump = _browse(chromium, tmp_path, driven, "--dump-dom", "--virtual-time-budget=20000")
    match = re.search(r'<pre id="driver-result">(.*?)</pre>', dump, re.DOTALL)
    assert match is not None, "the page's script failed before the driver finished"
    seen = json.loads(html.unescape(match.group(1)))
    assert seen["first"] == [100, "sp-000#0", "1–100 of 230"]
    assert seen["third"] == [30, "sp-200#0", True]
    assert seen["down"] == ["101–200 of 230", ["sp-100#0"], "sp-100#0", _story(100)]
    # Episode 203's data is in page file 4; its story is shown as text and runs nothing.
    assert seen["evil"] == ["sp-203#0", _story(203) + BREAKOUT, "LateralGym · run"]
    assert seen["images"] == 0
    assert seen["last"] == ["sp-229#0", _story(229)]
    # The story search reads every page; the index finds titles and ids without any page.
    assert seen["prefix"] == [f"sp-{k}#0" for k in range(160, 170)]
    assert seen["walrus"] == [["sp-077#0"], "1 of 230 episodes"]  # its story is on page 1
    assert seen["title"] == ["sp-007#0", *(f"sp-{k:03d}#0" for k in range(70, 80))]


def test_chromium_opens_a_link_to_an_episode_on_a_later_page(
    chromium: str,  # noqa: F811 - the fixture
    tmp_path: Path,
    big_run: Path,
) -> None:
    dump = _browse(
        chromium, tmp_path, big_run / VIEWER_FILE, "--dump-dom", "--virtual-time-budget=20000", fragment="#sp-180%230"
    )
    dom = _dom(dump)
    assert [a["data-id"] for a in dom.having("li", "episode") if "selected" in a["class"]] == ["sp-180#0"]
    assert _story(180) in html.unescape(dump) and dom.having("li", "step")
    assert "x" not in dom.bold_text


@pytest.mark.parametrize(("damage", "what"), [("missing", "could not be read"), ("cut", "holds no page 2")])
def test_chromium_says_what_to_do_when_a_page_file_is_missing_or_damaged(
    chromium: str,  # noqa: F811 - the fixture
    tmp_path: Path,
    damage: str,
    what: str,
) -> None:
    run_dir = _write_run(tmp_path / "run", 5)
    page = write_viewer(run_dir, page_size=2)
    file = pages_dir_for(page) / "page-00002.js"
    if damage == "missing":
        file.unlink()
    else:
        file.write_text(file.read_text(encoding="ascii")[:40], encoding="ascii")
    dump = _browse(chromium, tmp_path, page, "--dump-dom", "--virtual-time-budget=10000", fragment="#sp-004%230")
    errors = re.findall(r'<div class="error">(.*?)</div>', dump, re.DOTALL)
    assert errors == [
        f"page file viewer-pages/page-00002.js {what}: keep the viewer-pages folder next to this page, "
        "or write the viewer again with `lateralgym view`"
    ]
    assert [a["data-id"] for a in _dom(dump).having("li", "episode") if "selected" in a["class"]] == ["sp-004#0"]


def test_view_of_a_big_run_and_of_a_folder_of_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    big = _write_run(runs / "big", 260)
    _write_run(runs / "small", 3)
    assert main(["view", str(big)]) == 0
    assert (big / "viewer-pages" / "page-00001.js").is_file()
    assert main(["view", str(runs)]) == 0
    assert "the viewer of each of its 2 runs" in capsys.readouterr().out
    assert (runs / "index.html").is_file() and (runs / "small" / VIEWER_FILE).is_file()
    assert not (runs / "small" / "viewer-pages").exists()
    ids = [row[0] for row in _embedded((big / VIEWER_FILE).read_text(encoding="utf-8"))["index"]]
    assert len(ids) == 260 and sum(isinstance(r, EpisodeEnd) for r in read_log(big / "steps.jsonl")) == 260
