"""``load_policy`` reads a ``model.zip`` without unpickling anything from it (rl extra).

stable-baselines3's ``load`` rebuilds the ``:serialized:`` entries of the zip's ``data`` JSON with
cloudpickle: a crafted file runs code. Here every such entry (and one added beside them) is a pickle
that would create a marker file, and ``policy.pth`` is swapped for one: the marker never appears; the
policy loads from the readable settings and plays as the saved model does, or the file is refused in
one line naming it.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lateralgym.envs import EpisodeConfig, load_sample_items
from lateralgym.envs.benchmarks.creativity.rl.evaluation import split_tasks, training_config

HAVE_RL = importlib.util.find_spec("sb3_contrib") is not None and importlib.util.find_spec("torch") is not None
pytestmark = pytest.mark.skipif(not HAVE_RL, reason="the rl extra is not installed (pip install -e '.[rl]')")


class _Marker:
    """Unpickled, it creates the file ``path`` (what a crafted model would do, harmlessly)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """A small MaskablePPO model saved by SB3, and its ``model.zip``."""
    from sb3_contrib import MaskablePPO

    from lateralgym.envs.benchmarks.creativity.rl.ppo import (
        ActionScoringPolicy,
        one_thread,
        policy_kwargs,
        training_envs,
    )

    one_thread()
    config = training_config(EpisodeConfig.named("creativity-interactive"))
    envs = training_envs(config, split_tasks(load_sample_items("creativity"), "train")[:4], 1)
    kwargs = policy_kwargs(envs.envs[0].env)
    model = MaskablePPO(ActionScoringPolicy, envs, policy_kwargs=kwargs, n_steps=8, batch_size=8, seed=0, device="cpu")
    model.learn(total_timesteps=8)
    path = tmp_path_factory.mktemp("model") / "model.zip"
    model.save(path)
    return model, path


def _rewritten(source: Path, target: Path, replace: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(source) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    parts.update(replace)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return target


def _hostile_data(source: Path, marker: Path) -> bytes:
    """The ``data`` JSON with every ``:serialized:`` entry, and one more, a pickle creating ``marker``."""
    with zipfile.ZipFile(source) as archive:
        data = json.loads(archive.read("data"))
    payload = base64.b64encode(pickle.dumps(_Marker(marker))).decode()
    serialized = [key for key, value in data.items() if isinstance(value, dict) and ":serialized:" in value]
    assert {"policy_kwargs", "observation_space", "action_space"} <= set(serialized)
    for key in serialized:
        data[key][":serialized:"] = payload
    data["extra"] = {":type:": "<class 'object'>", ":serialized:": payload}
    return json.dumps(data).encode()


def _same_moves(policy: Any, model: Any) -> None:
    from lateralgym.envs.benchmarks.creativity.rl.ppo import greedy

    rng = np.random.default_rng(0)
    original = greedy(model)
    for _ in range(20):
        obs = rng.random(model.observation_space.shape[0]).astype(np.float32)
        mask = rng.random(int(model.action_space.n)) < 0.3
        mask[0] = True
        assert policy(obs, mask, rng) == original(obs, mask, rng)


def test_a_saved_model_loads_and_plays_as_it_was_saved(saved: tuple[Any, Path]) -> None:
    from lateralgym.envs.benchmarks.creativity.rl.ppo import load_policy

    model, path = saved
    _same_moves(load_policy(path), model)


def test_the_crafted_file_runs_code_under_sb3s_own_load(saved: tuple[Any, Path], tmp_path: Path) -> None:
    """The hazard, shown harmlessly: SB3's ``MaskablePPO.load`` (what ``load_policy`` called) unpickles the entries."""
    from sb3_contrib import MaskablePPO

    marker = tmp_path / "ran"
    hostile = _rewritten(saved[1], tmp_path / "model.zip", {"data": _hostile_data(saved[1], marker)})
    try:
        MaskablePPO.load(hostile, device="cpu")
    except Exception:  # the unpickled file objects are no spaces: SB3 fails after running them
        pass
    assert marker.exists()


def test_load_policy_never_unpickles_the_data_entries(saved: tuple[Any, Path], tmp_path: Path) -> None:
    from lateralgym.envs.benchmarks.creativity.rl.ppo import load_policy

    model, source = saved
    marker = tmp_path / "ran"
    hostile = _rewritten(source, tmp_path / "model.zip", {"data": _hostile_data(source, marker)})
    policy = load_policy(hostile)
    assert not marker.exists()
    _same_moves(policy, model)


def test_weights_that_are_a_pickle_are_refused_in_one_line(saved: tuple[Any, Path], tmp_path: Path) -> None:
    from lateralgym.envs.benchmarks.creativity.rl.model_file import ModelFileError
    from lateralgym.envs.benchmarks.creativity.rl.ppo import load_policy

    marker = tmp_path / "ran"
    hostile = _rewritten(saved[1], tmp_path / "model.zip", {"policy.pth": pickle.dumps(_Marker(marker))})
    with pytest.raises(ModelFileError) as caught:
        load_policy(hostile)
    assert not marker.exists()
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{hostile}: its policy.pth holds more than weights")


def _narrower_rows(data: dict[str, Any]) -> None:
    """Rows two wide, the scene block widened to keep the observation's width: other weights' shapes."""
    layout = data["policy_kwargs"]["features_extractor_kwargs"]
    n = int(data["action_space"]["n"])
    layout["scene_size"] += n * (layout["row_width"] - 2)
    layout["row_width"] = 2


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda data: data["policy_kwargs"].update(features_extractor_class="<class 'os.system'>"),
            "features extractor",
        ),
        (lambda data: data["policy_kwargs"].update(net_arch="[64, 64]"), "'net_arch'"),
        (lambda data: data.pop("action_space"), "no discrete action count"),
        (lambda data: data["observation_space"].update(_shape=[7]), "observation width 7"),
        (_narrower_rows, "weights do not fit"),
    ],
    ids=["another extractor", "another network", "no action space", "another width", "other weights"],
)
def test_settings_it_does_not_know_are_refused_in_one_line(
    saved: tuple[Any, Path], tmp_path: Path, change: Any, expected: str
) -> None:
    from lateralgym.envs.benchmarks.creativity.rl.model_file import ModelFileError
    from lateralgym.envs.benchmarks.creativity.rl.ppo import load_policy

    with zipfile.ZipFile(saved[1]) as archive:
        data = json.loads(archive.read("data"))
    change(data)
    path = _rewritten(saved[1], tmp_path / "model.zip", {"data": json.dumps(data).encode()})
    with pytest.raises(ModelFileError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ") and expected in message
