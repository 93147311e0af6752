"""devcluster's aggregation layer (kube-aggregator, in miniature) and the authentication it needs.

- :mod:`.pki`: the front-proxy CA and client certificate, the client CA and the admin token, made once
  in ``<data-dir>/pki`` and reused;
- :mod:`.identity`: who a caller is (the bearer tokens devcluster issued, else anonymous), TokenReview,
  SubjectAccessReview and the ``kube-system/extension-apiserver-authentication`` ConfigMap;
- :mod:`.registry`: APIServices resolved to a backend address (Service → EndpointSlices) and the
  ``Available`` condition from probing it;
- :mod:`.proxy`: requests for an aggregated group/version forwarded with the front-proxy certificate
  and the caller's ``X-Remote-User``/``X-Remote-Group``.
"""

from devcluster.aggregation.identity import ADMIN, Identity, User
from devcluster.aggregation.layer import AggregationLayer
from devcluster.aggregation.pki import Pki
from devcluster.aggregation.proxy import Proxy
from devcluster.aggregation.registry import Backend, Registry

__all__ = ["ADMIN", "AggregationLayer", "Backend", "Identity", "Pki", "Proxy", "Registry", "User"]
