"""Personal context (CONTRACT §12): what the person tells every chat, in Settings → Personal.

`settings.personal` `{"about", "instructions", "date"}`. The instructions go first in every
request's system text, before the folder's and the chat's own prompts (`Feature.preamble`);
what the person says about themself and today's date follow as data (`Feature.system_text`),
so the meter and the inspector count and show them. Temporary chats get them too.
"""
from __future__ import annotations

from backend.features.personal import context, section
from backend.turns.features import Feature

FEATURE = Feature(
    name="personal",
    settings=(section.SECTION,),
    preamble=context.instructions,
    system_text=context.about_and_date,
)
