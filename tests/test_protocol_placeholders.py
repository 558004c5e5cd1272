"""`sitegen protocol lock` on the protocol `init` wrote, placeholders and all: locked, since tests and scripts lock a
fresh review, but each placeholder is named by file and line, with the amendment that now changes protocol.md."""

from __future__ import annotations

from sitegen.review.scaffold import PLACEHOLDERS

AT = "2026-01-01T00:00:00Z"


def test_every_placeholder_is_one_init_writes(sitegen, tmp_path):
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    for name, placeholders in PLACEHOLDERS.items():
        text = (review / name).read_text(encoding="utf-8")
        assert all(placeholder in text for placeholder in placeholders), name


def test_locking_init_s_protocol_names_each_placeholder_left(sitegen, tmp_path):
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    code, out, err = sitegen("protocol", "lock", review, "--at", AT)
    assert code == 0 and "locked" in out, err
    warned = [line for line in err.splitlines() if line.startswith("warning: ")]
    lines = {name: (review / name).read_text(encoding="utf-8").splitlines() for name in PLACEHOLDERS}
    expected = [(name, number) for name in PLACEHOLDERS for number, line in enumerate(lines[name], start=1)
                for placeholder in PLACEHOLDERS[name] if placeholder in line]
    assert len(warned) == len(expected) == sum(map(len, PLACEHOLDERS.values()))
    for said, (name, number) in zip(warned, expected, strict=True):
        assert said.startswith(f"warning: {review / name}:{number}: still says init's placeholder “"), said
    assert "“replace with a keyword” (now locked as written)" in err and "“Your Name”" in err
    assert f"`sitegen protocol amend {review} --at TIME --reason TEXT`" in err


def test_a_protocol_of_the_review_s_own_text_is_locked_without_a_word(sitegen, tmp_path):
    review = tmp_path / "review"
    assert sitegen("init", review)[0] == 0
    for name, placeholders in PLACEHOLDERS.items():
        text = (review / name).read_text(encoding="utf-8")
        for number, placeholder in enumerate(placeholders):
            text = text.replace(placeholder, f"Rodents {number}")
        (review / name).write_text(text, encoding="utf-8")
    code, out, err = sitegen("protocol", "lock", review, "--at", AT)
    assert code == 0 and "locked" in out and err == "", err
