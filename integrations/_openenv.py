"""A LateralGym config as an OpenEnv environment, served by ``openenv-core``'s own server.

``openenv_app(sessions, max_sessions=N)`` builds the FastAPI app with ``openenv.core``'s
``create_fastapi_app``: ``/ws`` (one WebSocket per client; each holds one ``LateralGymEnvironment``,
which drives one ``EpisodeSession`` per ``reset``), ``/health``, ``/schema``, ``/metadata`` and the
stateless HTTP ``/reset`` and ``/step`` OpenEnv defines. The protocol is openenv-core's; this
module only says what a LateralGym episode is in its terms:

* action ``{"text": MOVE}``: exactly the text ``env.step`` takes (``ask: ...``, ``inspect: ...``,
  ``commit: ...``); the schema's description lists the config's move forms;
* observation: ``text`` (what the player reads), ``info`` (the env's public ``info``: never the
  outcome, whose fields can name the answer), ``legal_moves`` (every move, where the benchmark's
  grammar makes them a finite list: multiple choice), ``reward`` and ``done``;
* ``reset(seed=, item_id=, split=, episode_id=)``; ``state``: the client's episode id, the turn,
  the config and the opaque item key, never the dataset id (a release's ids can spell the answer).

Steps run on the server's event loop (``step_async``): an LLM judge awaits its model there without
holding up other sessions, an offline judge's step never suspends. Errors reach the client as
openenv-core's error frame with one line that names no hidden text (a judge that failed is named
by its error type; the log keeps the rest). A client that leaves mid-episode has its episode ended
with ``error`` in the log.
"""

from __future__ import annotations

import functools
import os
import weakref
from typing import Any

from pydantic import Field, create_model

from lateralgym.envs import ConfigError, EpisodeOverError, FreeText, LateralGymError, LineForm, OneOf, usage_text
from lateralgym.episodes import EpisodeSession, EpisodeSessions, package_version

os.environ.setdefault("ENABLE_WEB_INTERFACE", "false")  # before openenv reads it: no Gradio page is served

from openenv.core.env_server.http_server import create_fastapi_app  # noqa: E402
from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State  # noqa: E402

__all__ = ["LateralGymEnvironment", "LateralObservation", "legal_moves", "openenv_app", "public_info"]


class LateralObservation(Observation):  # type: ignore[misc]
    """What a client gets after ``reset`` and each ``step``."""

    text: str = ""
    """The observation text the player reads."""
    info: dict[str, Any] = Field(default_factory=dict)
    """The env's public ``info`` (item key, turn, limits, valid move, the scene's public facts, judge label)."""
    legal_moves: list[str] | None = None
    """Every move the player can make now, where the benchmark has a finite set (multiple choice); else None."""


class LateralState(State):  # type: ignore[misc]
    """``state``: where the session's episode is (nothing hidden)."""

    config: str = ""
    item: str = ""
    """The item's opaque key (as ``info["item"]``)."""
    turn: int = 0
    max_turns: int = 0
    reward: float = 0.0
    """The episode's rewards so far, summed."""
    done: bool = False


def public_info(info: dict[str, Any]) -> dict[str, Any]:
    """The env's ``info`` as a client may see it: JSON values, without the end-of-episode outcome."""
    return {key: _plain(value) for key, value in info.items() if key != "outcome"}


_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """``value`` as plain JSON values: numpy scalars and arrays, tuples and sets as numbers and lists,
    mapping keys as text, anything else as its text."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(item) for item in value]
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    return str(value)


def legal_moves(session: EpisodeSession) -> list[str] | None:
    """Every move the player can make now when the benchmark's action grammar makes them a finite list
    (each allowed form a line with one of listed values: multiple choice), else None."""
    env = session.env
    grammar = env.benchmark.prompts.action_grammar(session.info, None)
    if grammar is None or session.done:
        return None
    moves: list[str] = []
    for form in grammar.forms:
        if form.kind not in env.config.allowed_actions:
            continue
        if not isinstance(form, LineForm) or isinstance(form.value, FreeText):
            return None
        assert isinstance(form.value, OneOf)
        moves += [f"{form.kind}: {option}" for option in form.value.options]
    return moves or None


def action_model(sessions: EpisodeSessions) -> type[Action]:
    """The action type of a config: ``text``, described by the config's move forms."""
    forms = usage_text(sessions.config)
    text_field: Any = Field(
        description=f"One move, exactly as the env reads it. {forms}",
        examples=[line.split(": <", 1)[0] + ": ..." for line in forms.removeprefix("Allowed actions: ").split("; ")],
    )
    model: type[Action] = create_model("LateralAction", __base__=Action, text=(str, text_field))
    return model


_OPEN_ENDED: weakref.WeakSet[EpisodeSessions] = weakref.WeakSet()
"""Served configs whose moves are no finite list (free text somewhere): ``legal_moves`` is not asked again."""


class LateralGymEnvironment(Environment[Action, LateralObservation, LateralState]):  # type: ignore[misc]
    """One client's connection: an episode session per ``reset``, driven by the client's moves."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, sessions: EpisodeSessions) -> None:
        super().__init__()
        self.sessions = sessions
        self.session: EpisodeSession | None = None
        self.episode_id: str | None = None
        self._moves: list[str] | None = None
        """The episode's legal moves, read once at its reset (a finite set does not change during it)."""
        self._turn = 0
        """The episode's turn as of the last observation (a finished episode's env goes back to the pool)."""

    # -- OpenEnv API -----------------------------------------------------------------------------
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> LateralObservation:
        """Start an episode (``item_id`` and ``split`` may come in ``kwargs``)."""
        self._leave("unfinished: the client reset before the episode ended")
        unknown = sorted(set(kwargs) - {"item_id", "split"})
        if unknown:
            raise ConfigError(f"reset takes seed, episode_id, item_id and split; not {', '.join(unknown)}")
        session = self.sessions.open(seed=seed, item_id=kwargs.get("item_id"), split=kwargs.get("split"))
        session.start()
        # the client's own id, else an opaque one: the log's id names the dataset item
        self.episode_id = episode_id or f"{session.info['item']}#{session.spec.repeat}"
        self.session = session
        # A benchmark's moves are a finite list for every item or for none: asked once, then only where they are
        if self.sessions not in _OPEN_ENDED:
            self._moves = legal_moves(session)
            if self._moves is None:
                _OPEN_ENDED.add(self.sessions)
        session.log_start()
        return self._observation(None)

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> LateralObservation:
        """``reset`` on the server's event loop (it never waits on anything)."""
        return self.reset(seed, episode_id, **kwargs)

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> LateralObservation:
        """Play one move (HTTP ``/step`` is stateless in OpenEnv: it has no episode to step)."""
        session = self._current()
        try:
            _, reward, *_ = session.step(_text(action))
        except EpisodeOverError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failing judge ends the episode, never the server
            raise self._failed(session, exc) from None
        return self._observation(reward)

    async def step_async(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> LateralObservation:
        """Play one move on the server's event loop (an LLM judge is awaited there)."""
        session = self._current()
        try:
            _, reward, *_ = await session.astep(_text(action))
        except EpisodeOverError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failing judge ends the episode, never the server
            raise self._failed(session, exc) from None
        return self._observation(reward)

    @property
    def state(self) -> LateralState:
        """Where the connection's episode is."""
        session = self.session
        if session is None:
            return LateralState(config=self.sessions.config.name)
        return LateralState(
            episode_id=self.episode_id,
            step_count=self._turn,
            config=self.sessions.config.name,
            item=str(session.info.get("item", "")),
            turn=self._turn,
            max_turns=self.sessions.config.max_turns,
            reward=session.reward,
            done=session.done,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        """The config's name and what it is, for ``/metadata``."""
        config = self.sessions.config
        title = self.sessions.config.benchmark
        return EnvironmentMetadata(
            name=f"lateralgym/{config.name}",
            description=f"LateralGym {config.name}: {title} ({config.mode}, up to {config.max_turns} turns). "
            f"{usage_text(config)}",
            version=package_version(),
        )

    def close(self) -> None:
        """The client left: an episode under way is ended as unfinished in the log."""
        self._leave("unfinished: the client left mid-episode")

    # -- helpers ---------------------------------------------------------------------------------
    def _current(self) -> EpisodeSession:
        if self.session is None:
            raise EpisodeOverError("no episode yet: send reset first")
        if self.session.done:
            raise EpisodeOverError("the episode is over: send reset to start another")
        return self.session

    def _observation(self, reward: float | None) -> LateralObservation:
        session = self.session
        assert session is not None
        self._turn = session.env.turn
        if session.done and session.end is None:
            session.finish()
            self.sessions.release(session)
        # built from values of known types (the env's text, JSON values): pydantic's checks would only copy them
        observation: LateralObservation = LateralObservation.model_construct(
            text=str(session.obs["text"]),
            info=public_info(session.info),
            legal_moves=None if session.done else self._moves,
            metadata={},
            reward=reward,
            done=session.done,
        )
        return observation

    def _failed(self, session: EpisodeSession, exc: Exception) -> LateralGymError:
        """End the episode on a judge's failure; the client is told its kind, the log keeps the rest."""
        session.finish(session.fail(exc))
        self.sessions.release(session)
        return LateralGymError(
            f"the judge failed on this move ({type(exc).__name__}); the episode is logged as errored: reset to "
            "start another"
        )

    def _leave(self, why: str) -> None:
        session = self.session
        if session is not None and session.end is None:
            session.finish(why)
            self.sessions.release(session)


def _text(action: Action) -> str:
    text = getattr(action, "text", None)
    if not isinstance(text, str):
        raise ConfigError('an action is {"text": MOVE}')
    return text


def openenv_app(sessions: EpisodeSessions, *, max_sessions: int = 64) -> Any:
    """The OpenEnv FastAPI app serving ``sessions``' config, at most ``max_sessions`` WebSocket sessions at once.

    Raises:
        ConfigError: ``max_sessions`` is below 1.
    """
    if max_sessions < 1:
        raise ConfigError(f"--max-sessions must be at least 1, got {max_sessions}")
    return create_fastapi_app(
        functools.partial(LateralGymEnvironment, sessions),
        action_model(sessions),
        LateralObservation,
        max_concurrent_envs=max_sessions,
    )
