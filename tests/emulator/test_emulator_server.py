"""Running the emulator: persistence with a database file, the command line, port
handling, and the sample data served end to end."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading

import pytest
import requests

from mddframes.emulator import serve
from mddframes.emulator._fallback import tiny_dataset

# every test here starts an emulator (serve, or `mddframes emulator` in a subprocess)
# pandas_free: runs once, on the newest pandas (tests/pandas_ends.py)
pytestmark = [pytest.mark.emulator, pytest.mark.pandas_free]


def auth(emu) -> dict[str, str]:
    return {"Authorization": f"Bearer {emu.token()}"}


def test_state_survives_a_restart_with_a_database_file(tmp_path):
    db = str(tmp_path / "emulator.sqlite")
    with serve(db=db, dataset=tiny_dataset) as emu:
        headers = auth(emu)
        table = {"metadata": {"columns": []}, "data": [{"big": 2**70}]}
        assert requests.put(
            emu.api_url + "/api/table/tbl-0002", json=table, headers=headers, timeout=10
        ).ok
        child = requests.post(
            emu.api_url + "/api/structure/dwh-0001/children/VIEW",
            json={"name": "v"},
            headers=headers,
            timeout=10,
        ).json()
    with serve(db=db, dataset=tiny_dataset) as emu:
        headers = auth(emu)
        text = requests.get(emu.api_url + "/api/table/tbl-0002", headers=headers, timeout=10).text
        assert text == '{"metadata":{"columns":[]},"data":[{"big":1180591620717411303424}]}'
        again = requests.get(
            emu.api_url + f"/api/structure/{child['id']}", headers=headers, timeout=10
        )
        assert again.json() == child
        emu.reset()  # reset returns to the starting data, in the file too
        assert (
            requests.get(
                emu.api_url + f"/api/structure/{child['id']}", headers=headers, timeout=10
            ).status_code
            == 404
        )


def test_two_emulators_run_side_by_side_on_free_ports():
    with serve(dataset=tiny_dataset) as first, serve(dataset=tiny_dataset) as second:
        assert first.base_url != second.base_url
        assert first.base_url.startswith("http://127.0.0.1:")


def test_a_taken_port_fails_at_once_with_a_clear_error():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(OSError, match=f"127.0.0.1:{port}"):
            with serve(dataset=tiny_dataset, port=port):
                pass


def test_serve_leaves_no_thread_running():
    before = {t.name for t in threading.enumerate()}
    with serve(dataset=tiny_dataset, export_seconds_per_element=0.01) as emu:
        headers = auth(emu)
        body = {"structureIds": ["dwh-0002", "dwh-0003"], "objectTypeId": "ddl"}
        assert (
            requests.post(
                emu.api_url + "/api/structure/export", json=body, headers=headers, timeout=10
            ).status_code
            == 202
        )
    leftover = {t.name for t in threading.enumerate() if t.is_alive()} - before
    assert not {name for name in leftover if "emulator" in name}


def test_command_line_prints_credentials_and_serves_until_interrupted(tmp_path):
    env = {**os.environ, "MDD_EMULATOR_CLIENT_SECRET": "cli-secret"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mddframes",
            "emulator",
            "--port",
            "0",
            "--token-ttl",
            "60",
            "--db",
            str(tmp_path / "db"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "Ctrl-C" in line:
                break
        printed = "".join(lines)
        base_url = re.search(r"listening on (http://127\.0\.0\.1:\d+)", printed).group(1)
        assert "client id:     mddframes-demo" in printed
        # stdout is a pipe: the exact export lines, the secret left out (issue 24)
        assert f"  export MDD_BASE_URL={base_url}\n" in printed
        assert "  export MDD_CLIENT_ID=mddframes-demo\n" in printed
        assert "cli-secret" not in printed
        assert "choose it with --client-secret or MDD_EMULATOR_CLIENT_SECRET" in printed
        token_url = re.search(r"token url:\s+(\S+)", printed).group(1)
        form = {
            "grant_type": "client_credentials",
            "client_id": "mddframes-demo",
            "client_secret": "cli-secret",
        }
        answer = requests.post(token_url, data=form, timeout=10).json()
        assert answer["expires_in"] == 60
        tree = requests.get(
            base_url + "/api/mdd-backend/api/system/DWH/tree",
            headers={"Authorization": f"Bearer {answer['access_token']}"},
            timeout=10,
        )
        assert tree.status_code == 200
        assert len(tree.json()) >= 150
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
    assert process.returncode in (0, 130)


def test_sample_data_is_served_end_to_end(emu):
    """Every table and mapping the sample's tree points at answers (shared sample fixture)."""
    headers = auth(emu)
    api = emu.api_url + "/api"
    tree = requests.get(api + "/system/DWH/tree", headers=headers, timeout=10).json()
    assert len(tree) >= 150
    session = requests.Session()
    session.headers.update(headers)
    table_ids = [e["tableId"] for e in tree if e.get("tableId")]
    mapping_ids = [e["mappingId"] for e in tree if e.get("mappingId")]
    assert table_ids and mapping_ids
    from urllib.parse import quote

    for table_id in table_ids:
        assert session.get(f"{api}/table/{quote(table_id, safe='')}", timeout=10).status_code == 200
    for mapping_id in mapping_ids:
        assert (
            session.get(f"{api}/mapping/{quote(mapping_id, safe='')}", timeout=10).status_code
            == 200
        )
    object_types = session.get(api + "/object-type", timeout=10).json()
    assert len(object_types) >= 3
    assert all("template" not in o for o in object_types)
    # every object type renders one element it applies to
    for object_type in object_types:
        element = next(e for e in tree if e["type"] in object_type["elementTypes"])
        response = session.post(
            f"{api}/structure/{quote(element['id'], safe='')}/export/{quote(object_type['id'], safe='')}",
            timeout=10,
        )
        assert response.status_code == 200, response.text
        assert response.text.strip()
    session.close()


def test_scale_data_serves_n_elements_and_can_be_loaded_at_run_time():
    with serve(elements=2_000) as emu:
        headers = auth(emu)
        tree = requests.get(
            emu.api_url + "/api/system/SCALE/tree", headers=headers, timeout=30
        ).json()
        assert len(tree) == 2_000
        assert any(e.get("tableId") for e in tree)
        counts = emu.load_scale(500)
        assert counts["elements"] == 500
        emu.reset()  # back to the 2,000 it started with
        assert emu.info()["counts"]["elements"] == 2_000


def test_a_large_table_round_trips_exactly():
    rows = [
        {"id": n, "code": f"{n:06d}", "amount": "12.50", "big": 2**60 + n} for n in range(50_000)
    ]
    with serve(dataset=tiny_dataset) as emu:
        headers = auth(emu)
        url = emu.api_url + "/api/table/tbl-0003"
        payload = {"metadata": {"columns": []}, "data": rows}
        assert requests.put(url, json=payload, headers=headers, timeout=60).status_code == 200
        assert requests.get(url, headers=headers, timeout=60).json() == payload
