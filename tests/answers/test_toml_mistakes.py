"""An answer file TOML cannot read is named with its line, the line itself and the student's likely
mistake (issue 36 item 8): tomllib's bare "Expected newline or end of document after a statement"
told an instructor nothing about `size_1 = 46"`."""
import pytest

from examprep.answers.files import read_file

HEAD = 'student_id = "s106"\nname = "Student 6"\n\n[q1]  # Output sizes (receptive-field, 8 points)\n'


def unreadable(tmp_path, body):
    path = tmp_path / "s106.toml"
    path.write_text(HEAD + body, encoding="utf-8")
    subs, errors = read_file(path)
    assert subs == [] and len(errors) == 1
    return str(errors[0]).removeprefix(f"{path}: ")


@pytest.mark.parametrize("body,message", [
    ('size_1 = 46"\nsize_2 = "21"\n',
     'invalid TOML at line 5: size_1 = 46" — an unmatched quote ("): write the answer between two quotes, '
     'size_1 = "46" (TOML: expected newline or end of document after a statement, column 12)'),
    ('size_1 = "46\nsize_2 = "21"\n',
     'invalid TOML at line 5: size_1 = "46 — a quote opened and not closed: write size_1 = "46" '
     "(TOML: illegal character '\\n', column 13)"),
    ('size_2 = "21"\nsize_1 = "46',              # at the end of the file, where tomllib names no line
     'invalid TOML at line 6: size_1 = "46 — a quote opened and not closed: write size_1 = "46" '
     "(TOML: unterminated string)"),
    ("same_output = same as input\n",
     'invalid TOML at line 5: same_output = same as input — the answer is not in quotes: '
     'write same_output = "same as input" (TOML: invalid value, column 15)'),
    ('size_1 = "43"\nsize_2 = "21"\nsize_1 = "44"\npad = "2"\n',
     'invalid TOML at line 7: size_1 = "44" — size_1 is written twice (first on line 5): keep one answer '
     "(TOML: cannot overwrite a value, column 14)"),
    ('size_1 = "43"\nsize_1 = "44"',                # the last line: tomllib names none
     'invalid TOML at line 6: size_1 = "44" — size_1 is written twice (first on line 5): keep one answer '
     "(TOML: cannot overwrite a value)"),
    ('size_1 = "43"\n\n[q2\nloss = "0.5"\n',
     "invalid TOML at line 7: [q2 — a table header opens with '[' and closes with ']': write [q2] "
     "(TOML: expected ']' at the end of a table declaration, column 4)"),
    ('size_1 = "43"\n[q1]\nloss = "0.5"\n',
     "invalid TOML at line 6: [q1] — [q1] appears twice (first on line 4): put its answers under one header "
     "(TOML: cannot declare ('q1',) twice, column 4)"),
    ("loss = 0,75\n",
     'invalid TOML at line 5: loss = 0,75 — a number with a decimal comma is text: write it in quotes, '
     'loss = "0,75" (TOML: expected newline or end of document after a statement, column 9)'),
    ('size_1 43\n',
     "invalid TOML at line 5: size_1 43 — '=' missing between the name and the answer: write size_1 = \"43\" "
     "(TOML: expected '=' after a key in a key/value pair, column 8)"),
    ('size_1 =\nsize_2 = "21"\n',
     'invalid TOML at line 5: size_1 = — no answer after \'=\': write size_1 = "" to leave it blank '
     "(TOML: invalid value, column 9)"),
    ('answer = "he said "no""\n',
     "invalid TOML at line 5: answer = \"he said \"no\"\" — a quote inside the answer ends it: write it in single "
     "quotes, answer = 'he said \"no\"', or leave the inner quotes out "
     "(TOML: expected newline or end of document after a statement, column 20)"),
    ('grad = "\\sqrt{2}"\n',
     "invalid TOML at line 5: grad = \"\\sqrt{2}\" — a backslash in double quotes starts an escape: write the "
     "answer in single quotes ('\\frac{1}{2}') or double each backslash (TOML: unescaped '\\' in a string, column 11)"),
])
def test_malformed_line_named_with_its_likely_mistake(tmp_path, body, message):
    assert unreadable(tmp_path, body) == message


def test_a_long_or_hostile_line_is_quoted_short_and_escaped(tmp_path):
    got = unreadable(tmp_path, 'size_1 = 4\x1b[2J' + "6" * 100 + '"\n')
    assert got.startswith("invalid TOML at line 5: size_1 = 4\\x1b[2J666") and "\x1b" not in got
    assert got.count("…") == 2 and "\n" not in got


def test_a_well_formed_file_next_to_them_is_read(tmp_path):
    path = tmp_path / "ok.toml"
    path.write_text(HEAD + 'size_1 = "46"\nsize_2 = 21\n', encoding="utf-8")
    subs, errors = read_file(path)
    assert errors == [] and subs[0].answers == {"q1": {"size_1": "46", "size_2": 21}}


@pytest.mark.parametrize("body,message", [          # issue 36 attack, item 7
    ('size_1 = "43"\n\n[q 3]\nloss = "0.5"\n',
     "invalid TOML at line 7: [q 3] — a table name has no spaces: write [q3] "
     "(TOML: expected ']' at the end of a table declaration, column 4)"),
    ('size_1 = "43"\n\n[q 3\nloss = "0.5"\n',
     "invalid TOML at line 7: [q 3 — a table header opens with '[' and closes with ']': write [q3] "
     "(TOML: expected ']' at the end of a table declaration, column 4)"),
    ("size_3 = “21”\n",
     'invalid TOML at line 5: size_3 = “21” — curly quotes are not TOML\'s: write the answer in straight quotes, '
     'size_3 = "21" (TOML: invalid value, column 10)'),
    ("size_3 = ‘21’  # my answer\n",
     'invalid TOML at line 5: size_3 = ‘21’  # my answer — curly quotes are not TOML\'s: write the answer in '
     'straight quotes, size_3 = "21" (TOML: invalid value, column 10)'),
    ('size_3 = "21”\n',
     'invalid TOML at line 5: size_3 = "21” — curly quotes are not TOML\'s: write the answer in straight quotes, '
     "size_3 = \"21\" (TOML: illegal character '\\n', column 14)"),
])
def test_a_spaced_header_and_curly_quotes_get_a_fix_that_reads(tmp_path, body, message):
    assert unreadable(tmp_path, body) == message
