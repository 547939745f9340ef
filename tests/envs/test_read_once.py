"""Loading a dataset reads the file once: format detection reads only its start (a JSONL file's
first line, a JSON list's first element), and the loader reads the rest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from official_data import write_creativitybench, write_lateval

import lateralgym.envs._loaders as loaders
import lateralgym.envs._samples as samples
import lateralgym.envs.records as official
from lateralgym.envs import load_items, load_sample_items, write_jsonl


def _count_whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    read_text = official.read_text

    def counted(path: Path) -> str:
        reads.append(path.name)
        return read_text(path)

    monkeypatch.setattr(official, "read_text", counted)
    return reads


@pytest.mark.parametrize("name", ["sample_tasks.json", "english.json", "chinese.json"])
def test_an_official_json_file_is_read_whole_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    write_creativitybench(tmp_path)
    write_lateval(tmp_path)
    reads = _count_whole_reads(monkeypatch)
    assert load_items(tmp_path / name)
    assert reads == [name]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_a_jsonl_file_is_streamed_once_past_its_first_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    tasks = load_sample_items("creativity")[:25]
    path = write_jsonl(tasks, tmp_path / f"tasks{suffix}")
    lines = len(samples.read_text(path).splitlines())
    reads = _count_whole_reads(monkeypatch)
    yielded: list[int] = []
    stream = samples.stream_lines

    def counted(file: Path) -> Iterator[str]:
        for line in stream(file):
            yielded.append(1)
            yield line

    monkeypatch.setattr(samples, "stream_lines", counted)
    monkeypatch.setattr(loaders, "stream_lines", counted)
    assert list(load_items(path)) == tasks
    assert reads == []
    assert lines <= len(yielded) <= lines + 2  # detection and the record kind read line 1 each
