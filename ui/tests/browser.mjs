// Browser tests of the web UI: headless Chromium driven by playwright-core
// against a running `peloton dev --regions 3` on sim hosts, which
// tests/ui/ui_test.go starts. One scenario a run:
//
//   node tests/browser.mjs SCENARIO
//
// Environment: PELOTON_URL (the gateway of region east), CHROMIUM (the
// browser binary), OUT (where screenshots go). It prints what it measured
// and exits non-zero when the scenario fails.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const BASE = process.env.PELOTON_URL ?? 'http://127.0.0.1:5390';
const OUT = process.env.OUT ?? '.';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

// DEV_TOKEN is the token of the `peloton dev` cluster under test: API
// calls send it, and pages open through its sign-in link.
const DEV_TOKEN = process.env.DEV_TOKEN;

async function api(method, path, body, token = DEV_TOKEN) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const resp = await fetch(BASE + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  if (!resp.ok) throw new Error(`${method} ${path}: ${resp.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

async function until(what, cond, ms = 30000) {
  const start = Date.now();
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const simJob = (name, extra = {}) => ({
  name,
  instances: 3,
  region: 'east',
  labels: { owner: 'ui-test' },
  task: { command: 'sim', env: { PELOTON_SIM_DURATION: '2s' }, resources: { cpu: 0.5, memMb: 64 } },
  ...extra,
});

/** open gives a fresh page that fails the run on any script error. */
async function open(browser, path, opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: 900 }, colorScheme: opts.scheme ?? 'light' });
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.assertNoErrors = () => {
    if (errors.length) throw new Error('script errors on the page: ' + errors.join('; '));
  };
  const link = DEV_TOKEN && !opts.signedOut ? '#token=' + DEV_TOKEN : '';
  // A page opened without a path is signed in first, through the link.
  if (path || link) await page.goto(BASE + (path ?? '/ui/') + link);
  return page;
}

async function shot(page, name) {
  const file = join(OUT, name + '.png');
  await page.screenshot({ path: file, fullPage: true });
  console.log(`screenshot ${file}`);
}

const scenarios = {
  // The sign-in link `peloton dev` prints signs the tab in and leaves the
  // token out of the address bar; without it the UI asks for a token, and
  // the API refuses a call without it.
  async devlink(browser) {
    if (!DEV_TOKEN) throw new Error('DEV_TOKEN is needed');
    if ((await fetch(BASE + '/v1/jobs')).status !== 401) throw new Error('peloton dev lets a call without its token list jobs');
    const page = await open(browser, '/ui/jobs');
    await page.getByTestId('who').waitFor();
    if (page.url().includes('token')) throw new Error('the token stayed in the address: ' + page.url());
    await page.goto(BASE + '/ui/hosts');
    await page.getByTestId('who').waitFor();
    const bare = await open(browser, '/ui/jobs', { signedOut: true });
    await bare.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    page.assertNoErrors();
    console.log('signed in by the link at ' + page.url() + '; a tab without it is asked to sign in');
  },

  // Every page opens, shows its heading and throws nothing.
  async pages(browser) {
    const job = (await api('POST', '/v1/jobs', simJob('pages'))).job;
    await until('a task of the job', async () => (await api('GET', `/v1/jobs/${job.id}/tasks`)).tasks?.length);
    const pages = [
      ['overview', '/ui/', 'Overview'],
      ['jobs', '/ui/jobs', 'Jobs'],
      ['job', `/ui/jobs/${job.id}`, 'pages'],
      ['task', `/ui/jobs/${job.id}/tasks/0`, 'Task 0'],
      ['pools', '/ui/pools', 'Pools'],
      ['hosts', '/ui/hosts', 'Hosts'],
      ['regions', '/ui/regions', 'Regions and drills'],
    ];
    for (const [name, path, heading] of pages) {
      const page = await open(browser, path);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await until(`${name}: the event stream is live`, () => page.getByTestId('stream').textContent().then((t) => t === 'live'), 10000);
      await page.waitForTimeout(1000); // the page's reads answered
      await shot(page, 'page-' + name);
      page.assertNoErrors();
      await page.context().close();
    }
    // The root redirects to the UI; a narrow, dark window works too.
    const narrow = await open(browser, '/', { width: 420, scheme: 'dark' });
    if (!narrow.url().endsWith('/ui/')) throw new Error(`/ went to ${narrow.url()}`);
    await narrow.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await shot(narrow, 'page-overview-narrow-dark');
    // Keyboard: a link of the navigation follows Enter, the new page's
    // heading takes the focus, and Tab reaches the search box.
    await narrow.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).focus();
    await narrow.keyboard.press('Enter');
    await narrow.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    await until('the heading to take the focus', () => narrow.evaluate(() => document.activeElement?.tagName === 'H1'), 5000);
    await narrow.keyboard.press('Tab');
    await narrow.keyboard.type('no-such-job');
    await narrow.getByText('No job matches.').waitFor();
    narrow.assertNoErrors();
  },

  // A job created through the API appears on the open jobs page and
  // succeeds there, with no reload.
  async 'job-live'(browser) {
    const page = await open(browser, '/ui/jobs');
    await page.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    await until('the event stream is live', () => page.getByTestId('stream').textContent().then((t) => t === 'live'), 10000);
    const job = (await api('POST', '/v1/jobs', simJob('live-' + Date.now()))).job;
    const row = page.locator(`tr[data-job="${job.id}"]`);
    const start = Date.now();
    await row.waitFor({ timeout: 15000 });
    console.log(`job row appeared after ${Date.now() - start} ms`);
    await row.locator('[data-state="SUCCEEDED"]').waitFor({ timeout: 60000 });
    console.log(`job SUCCEEDED on the page after ${Date.now() - start} ms`);
    await shot(page, 'job-live');
    page.assertNoErrors();
  },

  // A task that cannot be placed says why on its job's page.
  async pending(browser) {
    const job = (
      await api('POST', '/v1/jobs', {
        ...simJob('pending'),
        instances: 2,
        task: { command: 'sim', resources: { cpu: 1, memMb: 64 }, constraints: [{ key: 'zone', op: 'CONSTRAINT_OP_EQUALS', values: ['nowhere'] }] },
      })
    ).job;
    const page = await open(browser, `/ui/jobs/${job.id}`);
    const reasons = page.getByTestId('pending-reasons');
    await until('the placement reason', async () => (await reasons.textContent().catch(() => ''))?.includes('zone==nowhere'), 30000);
    console.log('pending reason: ' + (await reasons.locator('.reason').first().textContent()));
    await page.locator('tr[data-instance="0"]').getByText('zone==nowhere').waitFor();
    await shot(page, 'pending-reason');
    await api('POST', `/v1/jobs/${job.id}/stop`);
    page.assertNoErrors();
  },

  // A host drained from the UI drains (and is put back the same way).
  async drain(browser) {
    const page = await open(browser, '/ui/hosts?region=west');
    const row = page.locator('tr[data-host="sim/sim-4"][data-region="west"]');
    await row.waitFor();
    await row.getByRole('button', { name: 'Drain' }).click();
    const dialog = page.getByRole('dialog', { name: 'Drain sim/sim-4?' });
    await dialog.getByLabel('Reason').fill('kernel upgrade');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.locator('tr[data-host="sim/sim-4"][data-region="west"][data-state="DRAINED"], tr[data-host="sim/sim-4"][data-region="west"][data-state="DRAINING"]').waitFor({ timeout: 15000 });
    const hosts = (await api('GET', '/v1/hosts?hostId=sim/sim-4')).hosts.filter((h) => h.region === 'west');
    if (!hosts[0]?.draining || hosts[0]?.drainReason !== 'kernel upgrade') throw new Error('the API does not show the drain: ' + JSON.stringify(hosts));
    await row.getByText('kernel upgrade').waitFor();
    await shot(page, 'drain');
    await row.getByRole('button', { name: 'Undrain' }).click();
    await page.getByRole('dialog', { name: 'Put sim/sim-4 back into service?' }).getByRole('button', { name: 'Confirm' }).click();
    await page.locator('tr[data-host="sim/sim-4"][data-region="west"][data-state="UP"]').waitFor({ timeout: 15000 });
    page.assertNoErrors();
  },

  // A drill started from the UI fills in its report as it goes.
  async drill(browser) {
    // Work in central that the drill relocates.
    await api('POST', '/v1/jobs', {
      ...simJob('relocatable'),
      region: 'central',
      failover: { mode: 'MODE_ANY' },
      task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 1, memMb: 64 } },
    });
    const page = await open(browser, '/ui/regions');
    await page.locator('tr[data-region="central"]').waitFor();
    await page.getByRole('button', { name: 'Start a drill…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Start a region failure drill' });
    await dialog.getByLabel('Region').selectOption('central');
    await dialog.getByLabel('Fenced for (seconds)').fill('8');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    const start = Date.now();
    const report = page.locator('article.drill').first();
    await report.waitFor();
    const seen = {};
    await until(
      'the drill to complete',
      async () => {
        for (const k of ['detection', 'relocation', 'failback']) {
          const t = await report.getByTestId(k).textContent();
          if (t !== '…' && !seen[k]) {
            seen[k] = t;
            console.log(`drill ${k} ${t} shown after ${Date.now() - start} ms`);
            if (k === 'detection') await shot(page, 'drill-detected');
          }
        }
        const st = await report.getAttribute('data-state');
        return st === 'completed' || st === 'failed' ? st : false;
      },
      90000,
    );
    const st = await report.getAttribute('data-state');
    await shot(page, 'drill-report');
    if (st !== 'completed') throw new Error(`drill ended ${st}: ${await report.textContent()}`);
    // The last phase can arrive in the same refresh as the end state, after
    // the loop read its cell: read the finished report once more.
    for (const k of ['detection', 'relocation', 'failback']) {
      if (seen[k]) continue;
      const t = await report.getByTestId(k).textContent();
      if (t === '…') throw new Error(`the report never showed ${k}`);
      seen[k] = t;
      console.log(`drill ${k} ${t} shown with the finished report`);
    }
    page.assertNoErrors();
  },

  // The pools chart follows entitlement: /a alone gets the whole region;
  // when /b gets demand, /a's entitlement falls.
  async pools(browser) {
    // "/" gets children only once no job runs in it.
    for (const j of (await api('GET', '/v1/jobs')).jobs ?? []) {
      if (!['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_KILLED'].includes(j.status?.state)) await api('POST', `/v1/jobs/${j.id}/stop`);
    }
    await until(
      'every job finished',
      async () => ((await api('GET', '/v1/jobs')).jobs ?? []).every((j) => ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_KILLED'].includes(j.status?.state)),
      60000,
    );
    for (const path of ['/a', '/b']) {
      await api('POST', '/v1/pools', { path, reservation: { cpu: 20, memMb: 20000 }, share: { cpu: 1 } }).catch((e) => {
        if (!String(e).includes('exists')) throw e;
      });
    }
    const preemptible = (name, pool, n) => ({
      name,
      pool,
      region: 'east',
      preemptible: true,
      instances: n,
      task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 1, memMb: 100 } },
    });
    const page = await open(browser, '/ui/pools?pool=/a');
    const cell = (f) => page.locator(`table.pool-now[data-pool="/a"] tr[data-resource="cpu"] td[data-field="${f}"]`);
    await cell('entitlement').waitFor();
    const a = (await api('POST', '/v1/jobs', preemptible('batch-a', '/a', 100))).job;
    const high = await until('/a entitled to the whole region', async () => {
      const v = Number(await cell('entitlement').textContent());
      return v >= 35 ? v : false;
    });
    console.log(`/a entitlement alone: ${high}`);
    const b = (await api('POST', '/v1/jobs', preemptible('batch-b', '/b', 50))).job;
    const start = Date.now();
    const low = await until('/a entitlement to fall', async () => {
      const v = Number(await cell('entitlement').textContent());
      return v < high - 5 ? v : false;
    });
    console.log(`/a entitlement with /b asking: ${low} (after ${Date.now() - start} ms)`);
    const points = Number(await page.locator('figure.chart [data-points]').first().getAttribute('data-points'));
    if (points < 3) throw new Error(`the chart has ${points} samples`);
    await page.waitForTimeout(3000); // a few more samples after the change
    await shot(page, 'pools');
    await api('POST', `/v1/jobs/${a.id}/stop`);
    await api('POST', `/v1/jobs/${b.id}/stop`);
    page.assertNoErrors();
  },

  // The page of a 100,000-task job loads in under 2 s.
  async big(browser) {
    const n = 100000;
    // A leaf pool: "/" unless the pools scenario gave it children.
    const pools = (await api('GET', '/v1/pools')).pools;
    const leaf = pools.find((p) => !p.children?.length && p.path !== '/a')?.path ?? '/';
    const job = (
      await api('POST', '/v1/jobs', {
        name: 'big',
        region: 'west',
        instances: n,
        pool: leaf,
        task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 1, memMb: 16 } },
      })
    ).job;
    const created = Date.now();
    await until(
      'every task created',
      async () => {
        const j = (await api('GET', `/v1/jobs/${job.id}`)).job;
        const sum = Object.values(j.status?.taskStates ?? {}).reduce((a, x) => a + x, 0);
        return sum >= n;
      },
      180000,
    );
    console.log(`${n} tasks created in ${Date.now() - created} ms`);
    const page = await open(browser);
    // Warm the browser's cache of the app's files as a returning user has it.
    await page.goto(BASE + '/ui/jobs');
    await page.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    const start = Date.now();
    await page.goto(BASE + `/ui/jobs/${job.id}`);
    await page.locator('table.tasks tbody tr').nth(49).waitFor({ timeout: 30000 });
    await page.getByText(`1–50 of ${n.toLocaleString('en-US')}`).waitFor({ timeout: 30000 });
    await page.getByTestId('pending-reasons').waitFor({ timeout: 30000 });
    const ms = Date.now() - start;
    console.log(`page of a ${n}-task job loaded in ${ms} ms`);
    await shot(page, 'big-job');
    // Paging goes to the server: the last page.
    await page.getByRole('button', { name: 'Last page' }).click();
    await page.locator(`tr[data-instance="${n - 1}"]`).waitFor({ timeout: 10000 });
    await api('POST', `/v1/jobs/${job.id}/stop`);
    page.assertNoErrors();
    if (ms >= 2000) throw new Error(`the page took ${ms} ms, want under 2000`);
  },

  // Sign in with a bearer token, on a server with authentication (tests/ui
  // starts one for this scenario): a bad token is refused with a reason; a
  // viewer sees no stop, drain or drill button; an admin sees them; the
  // event stream and every API call carry the token.
  async signin(browser) {
    const admin = process.env.ADMIN_TOKEN;
    const viewer = process.env.VIEWER_TOKEN;
    if (!admin || !viewer) throw new Error('ADMIN_TOKEN and VIEWER_TOKEN are needed');
    if ((await fetch(BASE + '/v1/jobs')).status !== 401) throw new Error('the server lets anonymous callers list jobs');
    const job = (await api('POST', '/v1/jobs', simJob('signin', { task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 0.5, memMb: 64 } } }), admin)).job;
    const page = await open(browser, '/ui/');
    const bare = [];
    let phase = 'start';
    page.on('request', async (req) => {
      const url = new URL(req.url());
      // whoami is asked before signing in too; version is public. The
      // event stream's headers are not reported while it is open: its
      // status ("live" only after a 200, which needs the token) shows it.
      const skip = ['/v1/version', '/v1/auth/whoami', '/v1/events'];
      if (!url.pathname.startsWith('/v1/') || skip.includes(url.pathname)) return;
      const h = await req.allHeaders();
      if (!(h.authorization ?? '').startsWith('Bearer ')) bare.push(`${url.pathname} (${phase})`);
    });
    const signIn = async (tok) => {
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await page.getByLabel('Token').fill(tok);
      await page.getByRole('button', { name: 'Sign in' }).click();
    };
    await signIn('not-a-token');
    const err = page.getByTestId('signin-error');
    await err.waitFor();
    console.log('a bad token: ' + (await err.textContent()));
    await shot(page, 'signin-form');
    bare.length = 0;

    phase = 'viewer';
    await signIn(viewer);
    await page.getByTestId('who').filter({ hasText: 'viewer' }).waitFor();
    await page.getByTestId('stream').filter({ hasText: 'live' }).waitFor();
    await page.goto(BASE + `/ui/jobs/${job.id}`);
    await page.getByRole('heading', { level: 1, name: 'signin' }).waitFor();
    await page.locator('[data-can-stop="false"]').waitFor({ state: 'attached' });
    if (await page.getByRole('button', { name: 'Stop job' }).count()) throw new Error('a viewer sees "Stop job"');
    await page.goto(BASE + '/ui/hosts');
    await page.locator('table.hosts[data-can-manage="false"] tr[data-host]').first().waitFor();
    if (await page.getByRole('button', { name: 'Drain' }).count()) throw new Error('a viewer sees "Drain"');
    await page.goto(BASE + '/ui/regions');
    await page.getByRole('heading', { level: 1, name: 'Regions and drills' }).waitFor();
    await page.getByTestId('who').waitFor();
    await shot(page, 'signin-viewer');
    if (await page.getByRole('button', { name: 'Start a drill…' }).count()) throw new Error('a viewer sees "Start a drill…"');
    console.log('viewer: no Stop job, Drain or Start a drill button');

    phase = 'sign-out';
    await page.getByRole('button', { name: 'Sign out' }).click();
    phase = 'admin';
    await signIn(admin);
    await page.getByTestId('who').filter({ hasText: 'root' }).waitFor();
    await page.goto(BASE + `/ui/jobs/${job.id}`);
    await page.getByRole('button', { name: 'Stop job' }).waitFor();
    await page.goto(BASE + '/ui/hosts');
    await page.getByRole('button', { name: 'Drain' }).first().waitFor();
    await shot(page, 'signin-admin');
    await page.goto(BASE + '/ui/regions');
    await page.getByRole('button', { name: 'Start a drill…' }).waitFor();
    await page.getByTestId('stream').filter({ hasText: 'live' }).waitFor();
    console.log('admin: Stop job, Drain and Start a drill shown');
    if (bare.length) throw new Error('API calls without the token after signing in: ' + [...new Set(bare)].join(', '));
    await api('POST', `/v1/jobs/${job.id}/stop`, {}, admin);
    page.assertNoErrors();
  },
};

const name = process.argv[2];
if (!scenarios[name]) {
  console.error(`usage: node tests/browser.mjs ${Object.keys(scenarios).join('|')}`);
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
let failed = false;
try {
  await scenarios[name](browser);
  console.log(`ok ${name}`);
} catch (e) {
  failed = true;
  console.error(`FAIL ${name}: ${e?.stack ?? e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
