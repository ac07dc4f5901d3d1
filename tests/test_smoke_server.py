def test_health_needs_no_token(server):
    r = server.api(token=None).get("/api/health")
    assert r.status == 200 and r.body["ok"] is True


def test_sigterm_removes_server_json(server):
    took = server.terminate()
    assert took < 10
    assert not (server.data_dir / "server.json").exists()
