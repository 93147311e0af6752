"""Fixtures of the dashboard's HTML tests (no browser): clients of the session app (tests/conftest.py).

``http`` is a Flask test client of ``app`` (tests/conftest.py: one app over the session cluster; ``make_app`` builds more
on its cluster access, with other settings — here with ``testing=False``) that has loaded a page (so it holds the CSRF
cookie) and knows its token (``http.csrf``). ``custom`` writes objects straight to the API server. Tests work in their
own ``namespace``. ``deleter`` (real control plane only): an app whose person may read everything but Pods and delete
Darkrooms in one namespace only — an app of its own, in the login mode on the real control plane, where the session's
apps are in the local mode on ``kube``. What tests import lives beside this plugin: clients.py (``Client``, ``Deleter``)
and read_rules.py (``READ_RULES``, ``POD_RULES``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from backend.app import create_app
from tests.clusters import RealclusterProcess
from tests.identity.logins import login_settings
from tests.support import install_crds

from .clients import Client, Deleter
from .read_rules import READ_RULES


@pytest.fixture
def http(app: Flask) -> Client:
    return Client(app.test_client())


@pytest.fixture
def deleter(realcluster_required: None, realcluster: RealclusterProcess) -> Iterator[Deleter]:
    """Not parametrized by ``kube``: only the real control plane authorizes (devcluster allows everything)."""
    from kubernetes import client, config

    from backend.server import shutdown as serving

    install_crds(realcluster.kubeconfig)
    admin = config.new_client_from_config(config_file=str(realcluster.kubeconfig))
    rbac: Any = client.RbacAuthorizationV1Api(admin)  # plain dict bodies: the client sends them as they are
    core: Any = client.CoreV1Api(admin)
    suffix = uuid.uuid4().hex[:6]
    allowed, refused, reader = f"deleter-a-{suffix}", f"deleter-b-{suffix}", f"deleter-reader-{suffix}"
    subject = {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}
    rbac.create_cluster_role({"metadata": {"name": reader}, "rules": READ_RULES})
    cluster_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": reader}
    rbac.create_cluster_role_binding({"metadata": {"name": reader}, "roleRef": cluster_ref, "subjects": [subject]})
    for name in (allowed, refused):
        core.create_namespace({"metadata": {"name": name}})
    deleting = {"apiGroups": ["deployments.example.com"], "resources": ["darkrooms"], "verbs": ["delete"]}
    rbac.create_namespaced_role(allowed, {"metadata": {"name": "deleter"}, "rules": [deleting]})
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deleter"}
    rbac.create_namespaced_role_binding(allowed, {"metadata": {"name": "deleter"}, "roleRef": role_ref, "subjects": [subject]})
    app = create_app(login_settings(realcluster.kubeconfig, allowed))  # alice signs in with her token: the pages act as her
    yield Deleter(app=app, admin=admin, allowed=allowed, refused=refused, token=realcluster.token("alice"))
    serving.shutdown(app)
    for name in (allowed, refused):
        core.delete_namespace(name)
    rbac.delete_cluster_role_binding(reader)
    rbac.delete_cluster_role(reader)
    admin.close()
