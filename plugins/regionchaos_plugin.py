"""Airflow plugin of regionchaos: the runs view (FastAPI app + nav entry) and the trigger check.

In:  the run storage (see ``regionchaos_airflow.storage``); trigger requests to the api-server.
Out: the app of ``regionchaos_airflow.app`` mounted by the api-server at ``/regionchaos``,
     a "Chaos runs" entry under Browse that shows it inside the Airflow UI (at ``/plugin/chaos``;
     a page of the app at ``/plugin/chaos/regionchaos/...``, `runs.in_airflow`), and the
     middleware of ``regionchaos_airflow.trigger_check``: a trigger (form or REST API) of a
     regionchaos DAG whose conf fails the DAG's whole-form check is refused with a 400 that
     names the form fields, before Airflow creates the run; the listener of
     ``regionchaos_airflow.listener`` that writes each finished run's verdict into its note.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from regionchaos_airflow.app import app
from regionchaos_airflow.listener import run_note_listener
from regionchaos_airflow.runs import AIRFLOW_VIEW_ROUTE, PLUGIN_PREFIX
from regionchaos_airflow.trigger_check import TriggerFormCheck

URL_PREFIX = PLUGIN_PREFIX


class RegionChaosPlugin(AirflowPlugin):
    name = "regionchaos"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "regionchaos runs"}]
    fastapi_root_middlewares = [
        {"middleware": TriggerFormCheck, "args": [], "kwargs": {}, "name": "regionchaos trigger form check"}
    ]
    listeners = [run_note_listener]  # the DAG run's note: verdict, failed invariants, report link
    external_views = [
        {
            "name": "Chaos runs",
            "href": URL_PREFIX.lstrip("/") + "/",
            "destination": "nav",
            "category": "browse",
            "url_route": AIRFLOW_VIEW_ROUTE,  # shown at /plugin/chaos, its frame's address after it
        }
    ]
