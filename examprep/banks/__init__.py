"""Question banks of other tools imported as question files (`examprep import`): Moodle XML, QTI 2.1
packages and Canvas's QTI 1.2 export, read as untrusted input (defusedxml, the grading input's size
limits, HTML reduced to text by escape.html_text).

    source.py    a bank's bytes: size limits, zip or folder packages, XML with entities refused
    model.py     one imported question and the question file it becomes
    formula.py   a Moodle formula in examprep's expression language (expr.py's whitelist)
    moodle.py    Moodle XML         qti.py    QTI 2.1 and Canvas QTI 1.2
    importer.py  the format told from the content, each file checked by the authoring parser,
                 all written at once
"""
