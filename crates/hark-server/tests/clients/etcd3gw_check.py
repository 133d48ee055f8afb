"""OpenStack's etcd3gw (PyPI), unchanged, against one server's JSON gateway.

Usage: python3 etcd3gw_check.py HOST PORT. Exits 0 after every check passed;
an assertion or a client exception fails it. Run against etcd 3.5.1 and
Hark by tests/http_gateway.rs, so the expectations are etcd's own.
"""

import sys
import threading
import time

import etcd3gw


def main(host: str, port: int) -> None:
    # api_path=None: the client reads GET /version and picks /v3/ from it.
    c = etcd3gw.client(host=host, port=port, api_path=None, timeout=10)
    assert c.api_path == '/v3/', c.api_path
    assert c.status()['version'], c.status()
    assert len(c.members()) == 1, c.members()

    # Keys: put, get, prefix, replace (a txn), create (a txn), delete.
    assert c.put('/app/a', '1') is True
    assert c.put('/app/b', '2') is True
    assert c.get('/app/a') == [b'1'], c.get('/app/a')
    assert c.get('/app/missing') == []
    values = sorted(v for v, _ in c.get_prefix('/app/'))
    assert values == [b'1', b'2'], values
    assert c.replace('/app/a', '1', '10') is True
    assert c.replace('/app/a', '1', '11') is False
    assert c.get('/app/a') == [b'10']
    assert c.create('/app/a', 'x') is False
    assert c.create('/app/c', '3') is True
    assert c.delete('/app/c') is True
    assert c.delete('/app/c') is False
    assert c.delete_prefix('/app/') is True
    assert c.get_prefix('/app/') == []

    # Leases: grant, a key on it, refresh (keep-alive), ttl, keys, revoke.
    lease = c.lease(ttl=30)
    assert c.put('/leased', 'v', lease=lease) is True
    assert lease.refresh() == 30
    assert 25 <= lease.ttl() <= 30, lease.ttl()
    assert lease.keys() == [b'/leased'], lease.keys()
    assert lease.revoke() is True
    assert c.get('/leased') == []

    # A lock: a lease and a create-if-absent transaction.
    lock = c.lock(ttl=30)
    assert lock.acquire() is True
    assert lock.is_acquired() is True
    assert lock.release() is True

    # Watches: one event, then a stream of events, over /v3/watch.
    def later(*puts):
        def run():
            time.sleep(0.5)
            for key, value in puts:
                c.put(key, value)
        threading.Thread(target=run, daemon=True).start()

    later(('/w/one', 'a'))
    event = c.watch_once('/w/one', timeout=10)
    assert event['kv']['value'] == b'a', event

    events, cancel = c.watch_prefix('/w/many/')
    later(('/w/many/1', 'x'), ('/w/many/2', 'y'), ('/w/many/1', 'z'))
    seen = []
    for event in events:
        seen.append((event['kv']['key'], event['kv']['value']))
        if len(seen) == 3:
            break
    cancel()
    assert seen == [(b'/w/many/1', b'x'), (b'/w/many/2', b'y'),
                    (b'/w/many/1', b'z')], seen
    print('etcd3gw: every check passed')


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]))
