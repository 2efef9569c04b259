"""flakesense confirm's `twice` condition for pytest: every selected test runs two times in one
process, one right after the other, without touching the project's code.

pytest drops a node id given twice on its command line (even with --keep-duplicates), so this
plugin, loaded with `-p flakesense_twice`, runs each item's protocol twice instead. Between the
two passes only the test's function-scoped fixtures are torn down and set up again; module,
class and session fixtures and module globals stay, as they would for the next test of the
module. A test that passes and then fails is non-idempotent: it leaves behind state that it
depends on. Both passes are reported under the same node id, in order.
"""

import pytest
from _pytest.runner import runtestprotocol


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    # Tearing down towards the item's parent ends the function scope alone.
    runtestprotocol(item, nextitem=item.parent, log=True)
    runtestprotocol(item, nextitem=nextitem, log=True)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
