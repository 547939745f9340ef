"""A chat env checks and indexes its items once: every rollout's fresh env shares that table, so a
rollout costs no work per dataset item."""

from __future__ import annotations

from lateralgym.envs import ItemTable, load_sample_items
from lateralgym.integrations import ChatEnv


def test_every_chat_rollout_shares_the_chat_envs_table() -> None:
    chat = ChatEnv("creativity-static", items=load_sample_items("creativity")[:12])
    assert isinstance(chat.items, ItemTable)
    first, second = chat.start(seed=1), chat.start(chat.items[4].id, seed=2)
    assert first.env is not second.env
    assert first.env.items is second.env.items is chat.items
