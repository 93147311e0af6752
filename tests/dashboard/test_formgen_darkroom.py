"""formgen on the Darkroom CRD (no cluster, no Flask app): what the Darkroom form needs beyond strings and numbers.

Behaviours: the source is a switch (its ``type`` as radio choices from the variant table in kinds.darkrooms,
each variant's own fields marked with it and required per variant, shared fields after them); the S3 keys
are write-only fields standing in for ``credentialsSecretRef``, with the stored object's ``credentialsSet``
as their state (kept on edit, never a key's value); ``subDomains`` is a list of strings (its item
constraints, required, added and removed by index, blanks dropped). The payload leaves out the unchosen
variant's fields and blank keys (blank = keep), always sends the required list; a stored object's values
give back its spec. The error summary's titles (list items by number) and order (the form's, not the
alphabet's: the form as a whole, identity, then top to bottom, items by index, rows by their order).
"""

from __future__ import annotations

from typing import Any

from werkzeug.datastructures import MultiDict

from backend.core.kinds import darkrooms as conversion
from backend.core.schemas.darkrooms import DarkroomCreateSchema, DarkroomUpdateSchema
from backend.dashboard import darkroompages, pgpages
from backend.dashboard import forms as formgen
from kinds import darkrooms as kind
from tests.dashboard.test_formgen import submitted

FORM = darkroompages.FORM_OF


def by_path(form: formgen.Form) -> dict[str, Any]:
    return {n.path: n for n in form.walk() if n.path}


def test_the_source_is_a_switch_from_the_variant_table() -> None:
    source = by_path(FORM)["source"]
    assert isinstance(source, formgen.Group) and source.switch == "source.type" and source.choices == tuple(kind.SOURCES)
    key, *rest = source.children
    assert isinstance(key, formgen.Field)
    assert key.widget == "radio" and [c.value for c in key.choices] == list(kind.SOURCES) and key.default == kind.DEFAULT_SOURCE_TYPE
    assert [c.label for c in key.choices] == ["Web folder", "S3 bucket"]
    marked = {child.path or child.label: child.variants for child in rest}
    assert marked == {
        "source.baseUrl": (0,),
        "source.bucket": (1,),
        "source.region": (1,),
        "source.endpoint": (1,),
        "Credentials": (1,),
        "source.pathPrefix": (),  # shared: after the variants' own fields
    }
    fields = by_path(FORM)
    assert fields["source.baseUrl"].required and fields["source.bucket"].required and not fields["source.endpoint"].required
    assert not fields["source.region"].required and "optional" in fields["source.region"].help  # as the CRD and the API say
    assert fields["source.baseUrl"].widget == "text" and fields["source.baseUrl"].pattern  # a URL: one line, however long
    keys = [fields["source.accessKey"], fields["source.secretKey"]]
    assert all(k.write_only and k.widget == "password" for k in keys) and [k.label for k in keys] == ["Access key", "Secret key"]


def test_sub_domains_are_a_list_of_strings() -> None:
    subs = by_path(FORM)["subDomains"]
    assert isinstance(subs, formgen.Strings)
    assert (subs.required, subs.min_items, subs.max_items, subs.item_max_length, subs.noun) == (True, 1, 50, 63, "sub-domain")
    assert subs.item_pattern == "[a-z0-9]([\\-a-z0-9]*[a-z0-9])?" and "DNS-1123 label" in subs.help
    assert subs.item_label(1) == "Sub-domain 2"


def test_blank_stored_and_submitted_values() -> None:
    blank = FORM.blank("shop")
    assert blank["source.type"] == "WebFolder" and blank["subDomains"] == [] and blank["source.credentialsSet"] is False
    assert "source.accessKey" not in blank
    spec = {
        "source": {"type": "S3", "bucket": "pics", "region": "eu-west-1", "credentialsSecretRef": {"name": "x"}},
        "subDomains": ["a", "b"],
    }
    cr = {"metadata": {"name": "d", "namespace": "shop", "generation": 3}, "spec": spec}
    values = FORM.values_of(conversion.to_friendly(cr))
    assert values["source.credentialsSet"] is True and values["subDomains"] == ["a", "b"] and values["source.bucket"] == "pics"
    assert FORM.kept(conversion.to_friendly(cr)) == {"source.credentialsSet": True}
    form = submitted(
        source__type="S3",
        source__bucket="pics",
        source__region="eu-west-1",
        subDomains=["a", " ", "b"],
        **{"source.credentialsSet": "true"},
    )
    again = FORM.form_values(form)
    assert again["subDomains"] == ["a", "b"] and again["source.credentialsSet"] is True
    payload = FORM.payload(again, form, create=False)
    assert payload == {"source": {"type": "S3", "bucket": "pics", "region": "eu-west-1"}, "subDomains": ["a", "b"]}  # blank keys: keep
    assert DarkroomUpdateSchema().load(payload)["source"]["bucket"] == "pics"


def test_the_unchosen_variant_is_left_out_and_keys_are_taken_as_typed() -> None:
    form = submitted(name="d", namespace="ns", source__type="WebFolder", source__baseUrl="https://x.example", source__bucket="typed",
                     source__accessKey=" key ", subDomains=["a"])  # fmt: skip
    values = FORM.form_values(form)
    assert values["source.bucket"] == "typed"  # shown again as typed
    payload = FORM.payload(values, form, create=True)
    assert payload == {"name": "d", "namespace": "ns", "source": {"type": "WebFolder", "baseUrl": "https://x.example"}, "subDomains": ["a"]}
    s3 = submitted(source__type="S3", source__bucket="b", source__region="r", source__accessKey=" key ", source__secretKey="s")
    payload = FORM.payload(FORM.form_values(s3), s3, create=False)
    assert payload["source"]["accessKey"] == " key " and payload["subDomains"] == []  # the required list is sent, empty: the schema says so
    assert FORM.summary(FORM.form_values(s3)) == [("Image source / Source type", "S3"), ("Image source / Bucket", "b"),
                                                  ("Image source / Region", "r"), ("Credentials", "not set")]  # fmt: skip


def test_items_are_added_and_removed() -> None:
    form = submitted(subDomains=["a", "", "c"])
    values = FORM.form_values(form)
    assert FORM.rearranged(values, MultiDict({**form, "add-item": "subDomains"})) and values["subDomains"] == ["a", "c", ""]
    values = FORM.form_values(form)
    assert FORM.rearranged(values, submitted(subDomains=["a", "", "c"], **{"remove-item": "subDomains:2"}))
    assert values["subDomains"] == ["a"]
    assert not FORM.rearranged(values, MultiDict({"remove-item": "version:0"}))


def test_the_error_summary_is_in_form_order() -> None:
    errors = {
        "subDomains.1": ["b"],
        "$": ["whole"],
        "cacheTime": ["c"],
        "source.baseUrl": ["u"],
        "name": ["n"],
        "subDomains": ["list"],
        "subDomains.0": ["a"],
        "zzz": ["unknown"],
        "source": ["s"],
    }
    order = [path for path, _ in FORM.ordered(errors)]
    assert order == ["$", "name", "source", "source.baseUrl", "subDomains", "subDomains.0", "subDomains.1", "cacheTime", "zzz"]
    titles = FORM.titles(errors)
    assert (
        titles["subDomains.1"] == "Sub-domain 2"
        and titles["source.baseUrl"] == "Image source / Base URL"
        and titles["source"] == "Image source"
    )
    pg = pgpages.FORM_OF
    rows = {"parameters": [("work_mem", "1"), ("max_connections", "x")]}
    assert [p for p, _ in pg.ordered({"parameters.work_mem": ["w"], "parameters.max_connections": ["m"], "version": ["v"]}, rows)] == [
        "version",
        "parameters.work_mem",
        "parameters.max_connections",
    ]


def test_a_stored_darkroom_submitted_unchanged_is_stored_unchanged() -> None:
    spec = {"version": "0.1.0", "replicas": 2, "source": {"type": "WebFolder", "baseUrl": "https://x.example", "pathPrefix": "p/"},
            "subDomains": ["a", "b"], "cacheTime": 60}  # fmt: skip
    values = FORM.values_of(conversion.to_friendly({"metadata": {"name": "d", "namespace": "ns"}, "spec": spec}))
    form: MultiDict[str, str] = MultiDict([(k, v) for k, v in values.items() if isinstance(v, str)])
    form.setlist("subDomains", values["subDomains"])
    payload = FORM.payload(FORM.form_values(form), form, create=True)
    assert conversion.to_spec(DarkroomCreateSchema().load(payload), secret_name=None) == spec
