"""Data files the tests read, kept in the repository so that a clone stands alone."""

from pathlib import Path

# The official BCF 2.1 XML schemas (buildingSMART BCF-XML, CC BY-ND, unmodified).
BCF_2_1_SCHEMAS = Path(__file__).resolve().parent / "bcf-schemas" / "2.1"


def bcf_2_1_schemas() -> dict:
    """The schemas a BCF 2.1 file is validated against: {"markup", "visinfo",
    "version"} -> xmlschema.XMLSchema."""
    import xmlschema

    return {
        name: xmlschema.XMLSchema(str(BCF_2_1_SCHEMAS / f"{name}.xsd"))
        for name in ("markup", "visinfo", "version")
    }
