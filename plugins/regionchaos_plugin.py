"""Airflow plugin of regionchaos: the runs view (FastAPI app + nav entry).

In:  the run storage (see ``regionchaos_airflow.storage``).
Out: the app of ``regionchaos_airflow.app`` mounted by the api-server at ``/regionchaos``,
     and a "Chaos runs" entry under Browse that shows it inside the Airflow UI.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from regionchaos_airflow.app import app

URL_PREFIX = "/regionchaos"


class RegionChaosPlugin(AirflowPlugin):
    name = "regionchaos"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "regionchaos runs"}]
    external_views = [
        {
            "name": "Chaos runs",
            "href": URL_PREFIX.lstrip("/") + "/",
            "destination": "nav",
            "category": "browse",
            "url_route": "regionchaos",
        }
    ]
