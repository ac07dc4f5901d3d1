"""Compare in a real Chromium (CONTRACT §10): models ticked in the picker, their replies streaming
side by side in columns (stacked on a narrow window), each with its figures; "Use this" makes a reply
the chat's and the conversation goes on from it; one model failing shows in its own column; a reload
shows the columns again. Every wait is on a DOM state or on the fake provider's requests."""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


@pytest.fixture
def three(setup):
    """Three catalog models on the fake: Fake (the chat's), Two and Three."""
    for api_model, label in (("fake-two", "Two"), ("fake-three", "Three")):
        r = setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": api_model, "label": label})
        assert r.status == 201, r
    return setup


def for_model(model: str, *steps) -> dict:
    return {"steps": list(steps), "model": model}


def tick(page, *labels: str) -> None:
    """Open the composer's picker, turn on "Compare models…", tick `labels`, press Compare."""
    picker = page.locator(".composer .model-picker")
    picker.locator(".model-picker-btn").click()
    picker.get_by_role("button", name="Compare models…").click()
    for label in labels:
        name = page.locator(".model-option-name", has_text=re.compile(f"^{label}$"))
        picker.get_by_role("option").filter(has=name).click()
    picker.get_by_role("button", name=f"Compare {len(labels)}").click()


def column(page, label: str):
    return page.locator(".compare-column").filter(has=page.locator(".compare-model", has_text=label))


def test_models_ticked_in_the_picker_answer_side_by_side_and_use_this_carries_on(page, three):
    setup = three
    chat = setup.chat(title="Comparing")
    open_chat(page, setup.server, chat, "Comparing")
    setup.fake.enqueue(for_model("fake-model", S.text("Fake's **answer**."), S.hang()),
                       for_model("fake-two", S.text("Two's answer.")),
                       for_model("fake-three", S.error(400, {"error": {"message": "model exploded"}})))
    tick(page, "Fake", "Two", "Three")
    expect(page.locator(".compare-chip")).to_have_text("Compare: Fake · Two · Three")
    send(page, "Which is best?")
    expect(page.locator(".compare-chip")).to_have_count(0)  # one send: the next goes to the chat's model
    # The first column is still writing while the second has finished: they stream independently.
    expect(column(page, "Two").locator(".compare-body")).to_have_text("Two's answer.")
    expect(column(page, "Fake").locator(".compare-body strong")).to_have_text("answer")
    expect(column(page, "Fake").locator(".compare-state")).to_have_text("writing…")
    expect(column(page, "Three").locator(".compare-error")).to_contain_text("Fake Local")
    setup.fake.release(1)
    expect(column(page, "Fake").locator(".compare-state")).to_have_text("done")
    # The figures come from the saved rows once the compare ended.
    expect(column(page, "Two").locator(".compare-figures")).to_contain_text("s to first token")
    # The first model's reply is the chat's until another is chosen; no reply bubble doubles a column.
    expect(column(page, "Fake").locator(".compare-chosen")).to_be_visible()
    expect(replies(page)).to_have_count(0)
    shot(page, "compare-columns")

    column(page, "Two").get_by_role("button", name="Use Two's reply: the chat goes on from it").click()
    expect(column(page, "Two").locator(".compare-chosen")).to_be_visible()
    expect(column(page, "Fake").locator(".compare-chosen")).to_be_hidden()
    setup.fake.enqueue([S.text("Going on.")])
    send(page, "And then?")
    expect(replies(page).last).to_contain_text("Going on.")
    asked = [r.body for r in setup.fake.requests if r.body and r.body.get("messages")][-1]
    assert [m.get("content") for m in asked["messages"]] == ["Which is best?", "Two's answer.", "And then?"]
    assert asked["model"] == "fake-model"

    # A reload shows the same columns, the chosen one marked.
    page.reload()
    expect(page.locator(".compare-column")).to_have_count(3)
    expect(column(page, "Two").locator(".compare-chosen")).to_be_visible()
    expect(column(page, "Fake").locator(".compare-body")).to_have_text("Fake's answer.")
    expect(replies(page)).to_have_count(1)  # the reply after the compare


def test_columns_wait_stack_on_a_narrow_window_and_a_compare_can_run_again(page, three):
    setup = three
    page.set_viewport_size({"width": 520, "height": 800})
    chat = setup.chat(title="Narrow")
    open_chat(page, setup.server, chat, "Narrow")
    # The second model's server holds it back before its first token (one model at a time): it waits.
    setup.fake.enqueue(for_model("fake-model", S.text("one")), for_model("fake-two", S.hang(), S.text("two")))
    tick(page, "Fake", "Two")
    send(page, "q")
    expect(column(page, "Fake").locator(".compare-state")).to_have_text("done")
    expect(column(page, "Two").locator(".compare-state")).to_have_text("Waiting for the model…")
    expect(column(page, "Two").locator(".compare-error")).to_be_hidden()
    setup.fake.release(1)
    expect(page.locator(".compare-column .compare-state").filter(has_text="done")).to_have_count(2)
    boxes = [c.bounding_box() for c in page.locator(".compare-column").all()]
    assert boxes[0]["x"] == boxes[1]["x"] and boxes[1]["y"] > boxes[0]["y"], boxes
    setup.fake.enqueue(for_model("fake-model", S.text("one again")), for_model("fake-two", S.text("two again")))
    page.get_by_role("button", name="Compare again").click()
    expect(page.locator(".compare")).to_have_count(2)
    expect(page.locator(".compare").last.locator(".compare-body").first).to_have_text("one again")
