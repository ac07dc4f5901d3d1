"""Text from elsewhere quoted in a sentence keeps its own end mark and gets no second one."""
import pytest

from backend.core.sentences import ended, said


@pytest.mark.parametrize("text, expected", [
    ("Overloaded!", "Overloaded!"),
    ("Is the model loaded?", "Is the model loaded?"),
    ("Bad request.", "Bad request."),
    ("Wait…", "Wait…"),
    ("(see the docs.)", "(see the docs.)"),
    ('He said "stop."', 'He said "stop."'),
    ("model not found", "model not found."),
    ("model not found:", "model not found."),
    ("  trailing comma, ", "trailing comma."),
    ("v1.2", "v1.2."),
    ("", ""),
    ("   ", ""),
])
def test_ended_punctuates_once(text, expected):
    assert ended(text) == expected


def test_said_joins_a_detail_after_a_clause():
    assert said("Overloaded!") == ": Overloaded!"
    assert said("model not found") == ": model not found."
    assert said("") == "."
    assert ".." not in "X failed" + said("done.") + " Try again."
