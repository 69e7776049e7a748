"""QTI 2.1 packages: every item, the test and the manifest validate against the IMS schemas in
../shared/qti (built once per session), and each response holds the part's answer with a tolerance
that means what examprep's does.

Two validators read the same schema files: libxml2 (lxml) in the default run, 80 times faster per
item than the pure-Python xmlschema; `-m slow` validates everything again with xmlschema, and a
default test checks that libxml2 refuses what the schemas forbid."""
import io
import zipfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from lxml import etree
from typer.testing import CliRunner

from examprep import generators, sheets
from examprep.cli import app
from examprep.sources.concepts import concept_problem, packaged_bank
from examprep.render import choices_shown, qti21

QTI_DIR = Path(__file__).resolve().parents[3] / "shared" / "qti"      # ../shared/qti beside the repository
# The IMS schemas are IMS's ("All Rights Reserved", used under their licence), not ours to ship: a clone with
# nothing beside it skips the schema checks (CI has ../shared, so they run there); the other tests still run.
NO_SCHEMAS = f"the IMS QTI 2.1 schemas are not in {QTI_DIR} (../shared/qti is not beside this checkout)"
NS = {"q": qti21.QTI, "cp": qti21.CP}


class Libxml2:
    """An XSD validator on libxml2: the schema's imports resolve in ../shared/qti, never on the network."""

    def __init__(self, xsd: Path):
        self.schema = etree.XMLSchema(etree.parse(str(xsd), etree.XMLParser(no_network=True)))

    def errors(self, data: bytes) -> list[str]:
        if self.schema.validate(etree.fromstring(data, etree.XMLParser(no_network=True))):
            return []
        return [f"line {e.line}: {e.message}" for e in self.schema.error_log]


class Xmlschema:
    """The same check with the pure-Python xmlschema package (about 5 s to build the QTI schema)."""

    def __init__(self, xsd: Path):
        self.schema = xmlschema.XMLSchema(str(xsd))

    def errors(self, data: bytes) -> list[str]:
        return [str(e) for e in self.schema.iter_errors(data.decode("utf-8"))]


def _schema_file(name: str) -> Path:
    """The schema file in ../shared/qti; the test asking for it is skipped, saying why, where it is absent."""
    path = QTI_DIR / name
    if not path.is_file():
        pytest.skip(NO_SCHEMAS)
    return path


@pytest.fixture(scope="session")
def qti_schema():
    return Libxml2(_schema_file("imsqti_v2p1p2.xsd"))


@pytest.fixture(scope="session")
def cp_schema():
    return Libxml2(_schema_file("imscp_v1p1.xsd"))


@pytest.fixture(scope="session")
def qti_xmlschema():
    return Xmlschema(_schema_file("imsqti_v2p1p2.xsd"))


@pytest.fixture(scope="session")
def cp_xmlschema():
    return Xmlschema(_schema_file("imscp_v1p1.xsd"))


def _valid(schema, data: bytes) -> None:
    errors = schema.errors(data)
    assert not errors, str(errors[0])[:2000]


def _flat(v):
    return [x for y in v for x in _flat(y)] if isinstance(v, list) else [v]


def _check_item(root: ET.Element, problem) -> None:
    """The responses hold the answers; the scoring rules add up to the problem's points; every
    numeric interval is examprep's own: its edges accepted, a little beyond them refused."""
    decls = {d.get("identifier"): d for d in root.findall("q:responseDeclaration", NS)}
    rules = [r for r in root.findall("q:responseProcessing/q:responseCondition/q:responseIf", NS)
             if r.find("q:setOutcomeValue[@identifier='SCORE']", NS) is not None]    # the others: known mistakes
    tests = {}
    total = 0.0
    for r in rules:
        test = r[0]
        ident = test.find("q:variable", NS).get("identifier")
        tests[ident] = test
        total += float(r.find("q:setOutcomeValue/q:sum/q:baseValue", NS).text)
    scored = [p for p in problem.parts if p.kind != "written"]
    assert total == pytest.approx(sum(p.points for p in scored))
    body = root.find("q:itemBody", NS)
    for i, part in enumerate(problem.parts):
        letter = "RESPONSE_" + chr(ord("A") + i)
        mine = sorted(k for k in decls if k == letter or k.startswith(letter + "_"))
        if part.kind == "written":
            assert mine == [letter] and letter not in tests
            inter = body.find(f".//q:extendedTextInteraction[@responseIdentifier='{letter}']", NS)
            assert inter is not None
            scorer = " ".join(body.find(".//q:rubricBlock[@view='scorer']", NS).itertext())
            assert part.model_answer in scorer and all(line in scorer for line in part.rubric)
        elif part.kind == "choice":
            inter = body.find(f".//q:choiceInteraction[@responseIdentifier='{letter}']", NS)
            shown = ["".join(c.itertext()) for c in inter.findall("q:simpleChoice", NS)]
            assert shown == choices_shown(part)
            right = decls[letter].find("q:correctResponse/q:value", NS).text
            assert shown[[c.get("identifier") for c in inter.findall("q:simpleChoice", NS)].index(right)] == part.expected
        elif part.kind == "expression" or isinstance(part.expected, str):
            assert tests[letter].tag == f"{{{qti21.QTI}}}stringMatch"
        else:
            values = _flat(part.expected)
            assert len(mine) == len(values)
            for ident in mine:
                assert body.find(f".//q:textEntryInteraction[@responseIdentifier='{ident}']", NS) is not None
            by_index = sorted(mine, key=lambda k: [int(x) for x in k.split("_")[2:]])
            for ident, v in zip(by_index, values):
                want = float(decls[ident].find("q:correctResponse/q:value", NS).text)
                assert want == float(v)
                test = tests[ident]
                assert float(test.find("q:baseValue", NS).text) == float(v)
                if test.get("toleranceMode") == "exact":
                    assert part.kind == "integer" or part.tolerance.rule == "exact"     # stricter by 1e-12 relative
                    continue
                assert test.get("toleranceMode") == "absolute"
                lo, hi = (float(t) for t in test.get("tolerance").split())
                assert lo == hi == part.tolerance.bound(v)
                for edge in (float(v) - lo, float(v) + hi):
                    assert part.tolerance.accepts(edge, v)            # never stricter than it must be ...
                beyond = lo * 1.001 + 1e-12
                assert not part.tolerance.accepts(float(v) + beyond, v)  # ... and never looser


GENERATORS = sorted(generators.load_all())


@pytest.mark.parametrize("name", GENERATORS)
def test_every_generator_at_every_level_gives_valid_items(qti_schema, name):
    for level in (1, 2, 3):
        p = generators.build(name, 0, level)
        data = qti21._xml(qti21.item_xml(p, "q1", f"{name} {level}"))
        _valid(qti_schema, data)
        _check_item(ET.fromstring(data), p)


@pytest.mark.slow
def test_xmlschema_finds_every_item_test_and_manifest_valid_too(qti_xmlschema, cp_xmlschema, midterm_package):
    for name in GENERATORS:
        for level in (1, 2, 3):
            _valid(qti_xmlschema, qti21._xml(qti21.item_xml(generators.build(name, 0, level), "q1", f"{name} {level}")))
    bank = packaged_bank()
    for concept in bank.questions.values():
        p = concept_problem(concept, 0, bank.version)
        _valid(qti_xmlschema, qti21._xml(qti21.item_xml(p, "c1", p.title)))
    _, z = midterm_package
    _valid(cp_xmlschema, z.read("imsmanifest.xml"))
    for name in z.namelist():
        if name.endswith(".xml") and name != "imsmanifest.xml":
            _valid(qti_xmlschema, z.read(name))


def _broken(data: bytes, edit) -> bytes:
    root = ET.fromstring(data)
    edit(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def test_the_validator_refuses_what_the_schemas_forbid(qti_schema, cp_schema, midterm_package):
    """libxml2 reads the whole schema set: an enumeration (the QTI README's own example), an element
    the content model has no room for, a required attribute, in an item and in the manifest."""
    item = qti21._xml(qti21.item_xml(generators.build("softmax-cross-entropy", 0, 1), "q1", "t"))
    _, z = midterm_package
    manifest = z.read("imsmanifest.xml")
    assert qti_schema.errors(item) == [] and cp_schema.errors(manifest) == []

    def approx(root):
        equal = root.find(".//q:equal", NS)
        equal.set("toleranceMode", "approx")

    def stray_element(root):
        ET.SubElement(root.find("q:itemBody", NS), f"{{{qti21.QTI}}}notAnElement")

    def no_identifier(root):
        del root.attrib["identifier"]

    def stray_resource_child(root):
        ET.SubElement(root.find("cp:resources/cp:resource", NS), f"{{{qti21.CP}}}notAnElement")

    for edit, where in ((approx, "toleranceMode"), (stray_element, "notAnElement"), (no_identifier, "identifier")):
        errors = qti_schema.errors(_broken(item, edit))
        assert errors and where in errors[0], (edit.__name__, errors)
    for edit, where in ((no_identifier, "identifier"), (stray_resource_child, "notAnElement")):
        errors = cp_schema.errors(_broken(manifest, edit))
        assert errors and where in errors[0], (edit.__name__, errors)


def test_concept_questions_are_choice_and_numeric_items(qti_schema):
    bank = packaged_bank()
    kinds = set()
    for concept in bank.questions.values():
        p = concept_problem(concept, 0, bank.version)
        data = qti21._xml(qti21.item_xml(p, "c1", p.title))
        _valid(qti_schema, data)
        _check_item(ET.fromstring(data), p)
        kinds.add(p.parts[0].kind)
    assert {"choice", "number"} <= kinds


@pytest.fixture(scope="module")
def midterm_package():
    sheet = sheets.build_sheet(sheets.load_recipe("midterm"), 2024)
    return sheet, zipfile.ZipFile(io.BytesIO(qti21.package(sheet)))


def test_package_manifest_test_and_items_validate(qti_schema, cp_schema, midterm_package):
    sheet, z = midterm_package
    names = z.namelist()
    problems = sheet.copies[0].problems
    assert names[:3] == ["imsmanifest.xml", "test.xml", "README.txt"]
    assert names[3:] == [f"items/q{k}.xml" for k in range(1, len(problems) + 1)]
    _valid(cp_schema, z.read("imsmanifest.xml"))
    _valid(qti_schema, z.read("test.xml"))
    for k, p in enumerate(problems, 1):
        data = z.read(f"items/q{k}.xml")
        _valid(qti_schema, data)
        _check_item(ET.fromstring(data), p)
    man = ET.fromstring(z.read("imsmanifest.xml"))
    files = [f.get("href") for f in man.iterfind(".//cp:file", NS)]
    assert sorted(files) == sorted(n for n in names if n.endswith(".xml") and n != "imsmanifest.xml")
    test = ET.fromstring(z.read("test.xml"))
    refs = [r.get("href") for r in test.iterfind(".//q:assessmentItemRef", NS)]
    assert refs == [f"items/q{k}.xml" for k in range(1, len(problems) + 1)]
    readme = z.read("README.txt").decode()
    assert "closest stricter rule" in readme and "latex2mathml" in readme


def test_written_parts_are_essays_with_the_rubric_for_the_scorer(midterm_package):
    sheet, z = midterm_package
    written = [k for k, p in enumerate(sheet.copies[0].problems, 1) if p.parts[0].kind == "written"]
    assert len(written) == 4
    for k in written:
        root = ET.fromstring(z.read(f"items/q{k}.xml"))
        assert root.find(".//q:extendedTextInteraction", NS) is not None
        assert root.find(".//q:rubricBlock", NS).get("view") == "scorer"
        assert root.find("q:responseProcessing/q:responseCondition", NS) is None     # marked by hand


def test_math_is_mathml():
    p = generators.build("mlp-backprop", 0, 1)
    root = qti21.item_xml(p, "q1", "t")
    maths = list(root.iter(f"{{{qti21.MATHML}}}math"))
    assert maths and all(m.get("display") in ("inline", "block") for m in maths)
    text = ET.tostring(root, encoding="unicode")
    assert "$" not in text and "\\mathrm" not in text and "\\begin" not in text


def test_variants_select_one_per_slot(qti_schema, cp_schema):
    roster = [sheets.Student("a1", "A"), sheets.Student("b2", "B")]
    secret = b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), 1, roster=roster, secret=secret)
    z = zipfile.ZipFile(io.BytesIO(qti21.package(sheet)))
    _valid(qti_schema, z.read("test.xml"))
    _valid(cp_schema, z.read("imsmanifest.xml"))
    test = ET.fromstring(z.read("test.xml"))
    slots = test.findall(".//q:assessmentSection/q:assessmentSection", NS)
    assert len(slots) == 9
    for s in slots:
        assert s.find("q:selection", NS).get("select") == "1"
        assert len(s.findall("q:assessmentItemRef", NS)) == 2
    assert len([n for n in z.namelist() if n.startswith("items/")]) == 18


def test_the_same_sheet_gives_the_same_bytes():
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), 5)
    assert qti21.package(sheet) == qti21.package(sheets.build_sheet(sheets.load_recipe("cnn"), 5))


def test_sheet_command_writes_the_package(tmp_path):
    res = CliRunner().invoke(app, ["sheet", "--recipe", "cnn", "--seed", "3", "--format", "qti21",
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "qti21.zip" in res.output
    z = zipfile.ZipFile(tmp_path / "o" / "qti21.zip")
    assert "imsmanifest.xml" in z.namelist()


def test_a_mistyped_format_names_the_right_one(tmp_path):
    res = CliRunner().invoke(app, ["sheet", "--recipe", "cnn", "--format", "qti", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.output.startswith("error: --format: unknown format 'qti'; did you mean qti21?")
    assert res.output.count("\n") == 1 and not (tmp_path / "o").exists()


def test_every_lms_file_is_refused_overwriting_without_force(tmp_path):
    args = ["sheet", "--recipe", "cnn", "--seed", "3", "--format", "qti21,canvas,blackboard-txt", "--out", str(tmp_path / "o")]
    assert CliRunner().invoke(app, args).exit_code == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir()}
    assert {"qti21.zip", "canvas.zip", "blackboard.txt"} <= set(before)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "already exist" in res.output and res.output.count("\n") == 1
    assert {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir()} == before
    assert CliRunner().invoke(app, args + ["--force"]).exit_code == 0
