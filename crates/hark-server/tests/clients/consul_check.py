"""Debian's python3-consul (0.7.1), unchanged, against Hark's Consul KV API.

Usage: python3 consul_check.py HOST PORT. Exits 0 after every check passed.
Blocking queries: a get parked on an index must not return for a put
elsewhere, and must return within 100 ms of a put to its own key or prefix.
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request

import consul


def main(host: str, port: int) -> None:
    c = consul.Consul(host=host, port=port)

    # Keys: put, get, recurse, keys with a separator, cas, delete.
    assert c.kv.put('web/a', 'hello') is True
    assert c.kv.put('web/b/1', 'x') is True
    assert c.kv.put('web/b/2', 'y') is True
    index, entry = c.kv.get('web/a')
    assert entry['Value'] == b'hello', entry
    assert entry['Key'] == 'web/a' and entry['Flags'] == 0, entry
    assert int(index) >= entry['ModifyIndex'], (index, entry)
    _, missing = c.kv.get('web/none')
    assert missing is None
    _, tree = c.kv.get('web/', recurse=True)
    assert [e['Key'] for e in tree] == ['web/a', 'web/b/1', 'web/b/2'], tree
    _, keys = c.kv.get('web/', keys=True, separator='/')
    assert keys == ['web/a', 'web/b/'], keys
    _, entry = c.kv.get('web/a')
    assert c.kv.put('web/a', 'stale', cas=entry['ModifyIndex'] - 1) is False
    assert c.kv.put('web/a', 'fresh', cas=entry['ModifyIndex']) is True
    assert c.kv.put('web/a', 'again', cas=0) is False
    assert c.kv.put('web/c', 'new', cas=0) is True
    _, entry = c.kv.get('web/c')
    assert c.kv.delete('web/c', cas=entry['ModifyIndex'] + 1) is False
    assert c.kv.delete('web/c', cas=entry['ModifyIndex']) is True
    assert c.kv.delete('web/b', recurse=True) is True
    _, keys = c.kv.get('web/', keys=True)
    assert keys == ['web/a'], keys

    # Flags are kept with the value, and dropped by a put without them.
    assert c.kv.put('web/f', 'flagged', flags=42) is True
    assert c.kv.get('web/f')[1]['Flags'] == 42
    assert c.kv.put('web/f', 'plain') is True
    assert c.kv.get('web/f')[1]['Flags'] == 0
    assert c.kv.delete('web/f') is True

    # A transaction (python-consul 0.7 has no txn call: plain HTTP): a
    # check and a set, all or nothing.
    def txn(ops):
        request = urllib.request.Request(
            'http://%s:%d/v1/txn' % (host, port), method='PUT',
            data=json.dumps(ops).encode())
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    _, entry = c.kv.get('web/a')
    status, ok = txn([
        {'KV': {'Verb': 'check-index', 'Key': 'web/a',
                'Index': entry['ModifyIndex']}},
        {'KV': {'Verb': 'set', 'Key': 'web/t', 'Value': 'dA=='}},
    ])
    assert status == 200 and ok['Errors'] is None, ok
    assert [r['KV']['Key'] for r in ok['Results']] == ['web/a', 'web/t'], ok
    status, failed = txn([
        {'KV': {'Verb': 'check-index', 'Key': 'web/a', 'Index': 1}},
        {'KV': {'Verb': 'set', 'Key': 'web/u', 'Value': 'dQ=='}},
    ])
    assert status == 409 and failed['Errors'][0]['OpIndex'] == 0, failed
    assert c.kv.get('web/u')[1] is None
    assert c.kv.get('web/t')[1]['Value'] == b't'

    # Blocking queries, on one key and on a prefix.
    for key, recurse, target in [('web/a', False, 'web/a'),
                                 ('web/', True, 'web/z')]:
        for _ in range(5):
            index, _ = c.kv.get(key, recurse=recurse)
            returned = {}

            def blocked():
                got, _ = c.kv.get(key, index=index, recurse=recurse,
                                  wait='20s')
                returned['at'] = time.monotonic()
                returned['index'] = got

            t = threading.Thread(target=blocked)
            t.start()
            time.sleep(0.3)
            c.kv.put('elsewhere/k', str(time.time()))
            time.sleep(0.3)
            assert 'at' not in returned, (key, 'woken by a put elsewhere')
            c.kv.put(target, str(time.time()))
            put_done = time.monotonic()
            t.join(10)
            assert 'at' in returned, (key, 'not woken by its own put')
            late = returned['at'] - put_done
            assert late < 0.1, (key, 'woken %.3f s after the put' % late)
            assert int(returned['index']) > int(index), returned

    # A short wait ends without a change, with the same data.
    index, _ = c.kv.get('web/a')
    start = time.monotonic()
    again, _ = c.kv.get('web/a', index=index, wait='1s')
    waited = time.monotonic() - start
    assert 1.0 <= waited < 1.5, waited
    print('python-consul: every check passed')


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]))
