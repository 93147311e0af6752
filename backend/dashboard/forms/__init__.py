"""Forms generated from a kind's CRD: what each module of the dashboard's forms does, and the names the pages use.

A kind's pages module declares a :class:`FormSpec` (:mod:`.specs`: what its form needs beyond the CRD) and a
:class:`FormPage` (its words and paths); :func:`build` (:mod:`.generating`) reads the CRD's schema and makes a
:class:`Form` (:mod:`.values`: values ↔ friendly payload) of :mod:`.nodes` (:class:`Field`, :class:`Group`,
:class:`Strings`, :class:`Pairs`); :func:`generated_flow` (:mod:`.pages`) serves it on ``form_page.html`` through
the create/edit/delete flow of :mod:`backend.dashboard.editing`.
"""

from backend.dashboard.forms.generating import build, crd_schema, humanize, js_pattern
from backend.dashboard.forms.nodes import Choice, Field, Group, Node, Pairs, Strings
from backend.dashboard.forms.pages import FormPage, GeneratedFlow, generated_flow
from backend.dashboard.forms.specs import FormSpec, FormSpecError, Section, StandIn, Switch, WriteOnly
from backend.dashboard.forms.values import Form

__all__ = [
    "Choice",
    "Field",
    "Form",
    "FormPage",
    "FormSpec",
    "FormSpecError",
    "GeneratedFlow",
    "Group",
    "Node",
    "Pairs",
    "Section",
    "StandIn",
    "Strings",
    "Switch",
    "WriteOnly",
    "build",
    "crd_schema",
    "generated_flow",
    "humanize",
    "js_pattern",
]
