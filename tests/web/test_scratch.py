import pytest
from hitl.scripted import phrases

pytestmark = pytest.mark.server

@pytest.mark.parametrize('n', range(4))
async def test_explore(n, web, server_order, server):
    order = server_order(899)
    requester = await web.sign_in("requester1")
    thread_id = await requester.start(phrases.refund_in_full(order))
    await requester.pending().wait_for()
    sup = await web.sign_in("supervisor1")
    await sup.page.evaluate("""() => {
      window.__log = [];
      const t0 = performance.now();
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.removedNodes) if (n.querySelector && (n.matches?.('[data-testid=interrupt-card], .decisions, .pending-list') || n.querySelector('[data-testid=interrupt-card]'))) window.__log.push([Math.round(performance.now()-t0), 'removed ' + n.className]);
        const n = document.querySelectorAll('[data-testid=interrupt-card]').length;
        const e = document.querySelectorAll('.schema-form').length;
        const last = window.__log[window.__log.length-1];
        const s = `${n} cards ${e} forms`;
        if (!last || last[1] !== s) window.__log.push([Math.round(performance.now()-t0), s]);
      }).observe(document.body, {subtree: true, childList: true});
    }""")
    await sup.open(thread_id)
    card = sup.action("issue_refund")
    await card.get_by_test_id("decision-edit").click()
    await sup.page.evaluate("window.__log.push([0, 'clicked'])")
    await sup.page.wait_for_timeout(4000)
    print(await sup.page.evaluate("window.__log"))
