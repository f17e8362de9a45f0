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
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
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
  const ctx = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 }, colorScheme: opts.scheme ?? 'light' });
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
      ['migrations', '/ui/migrations', 'Migrations'],
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
    // The overview reads the unfinished and failed jobs only, not every job.
    const ov = await open(browser);
    const lists = [];
    ov.on('request', (req) => {
      const u = new URL(req.url());
      if (u.pathname === '/v1/jobs' && req.method() === 'GET') lists.push(u.searchParams.getAll('states'));
    });
    await ov.goto(BASE + '/ui/');
    await ov.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await until('the overview read its jobs', async () => lists.length > 0, 10000);
    for (const states of lists) {
      if (!states.length || states.some((x) => x === 'JOB_STATE_SUCCEEDED' || x === 'JOB_STATE_KILLED')) throw new Error('the overview read jobs in states ' + (states.join(',') || 'any'));
    }
    await ov.context().close();
    // The jobs page reads one page of jobs, with its total: never the
    // pages after it, never a page bigger than it shows.
    for (let i = 0; i < 3; i++) await api('POST', '/v1/jobs', simJob('pages-more-' + i));
    const jp = await open(browser);
    const reads = [];
    jp.on('request', (req) => {
      const u = new URL(req.url());
      if (u.pathname === '/v1/jobs' && req.method() === 'GET') reads.push(u.searchParams);
    });
    await jp.goto(BASE + '/ui/jobs');
    await jp.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    await until('the jobs page read its page', async () => reads.length > 0, 10000);
    await jp.waitForTimeout(1000);
    const listed = ((await api('GET', '/v1/jobs?countTotal=true&limit=1')).total ?? 0);
    for (const p of reads) {
      const limit = Number(p.get('limit'));
      if (!limit || limit > 100 || p.get('pageToken')) throw new Error(`the jobs page read more than its page: /v1/jobs?${p}`);
    }
    const rows = await jp.locator('table.jobs tbody tr').count();
    if (rows > 100 || rows < Math.min(listed, 4)) throw new Error(`the jobs page shows ${rows} rows of ${listed} jobs`);
    await jp.getByRole('navigation', { name: 'Jobs pages' }).getByText(`of ${listed}`).waitFor();
    console.log(`jobs page: ${reads.length} read(s) of one page each, ${rows} rows of ${listed}`);
    jp.assertNoErrors();
    await jp.context().close();
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

  // Jobs made in the same minute share the first digits of their ids: the
  // list shows each whole (and copyable), and the overview names the job of
  // a paused update with the end of its id.
  async ids(browser) {
    const name = 'twin-' + Date.now();
    // On sim, so that a migration to spare has instances to move.
    const svc = { ...simJob(name), type: 'service', instances: 2, clusters: { prefer: ['sim'] }, task: { command: 'sim', resources: { cpu: 0.1, memMb: 16 } } };
    const a = (await api('POST', '/v1/jobs', svc)).job;
    const b = (await api('POST', '/v1/jobs', svc)).job;
    if (a.id.slice(0, 8) !== b.id.slice(0, 8)) console.log(`note: the twins' ids differ in their first 8 digits (${a.id}, ${b.id})`);
    const page = await open(browser, '/ui/jobs?q=' + name);
    for (const j of [a, b]) {
      const cell = page.locator(`tr[data-job="${j.id}"] [data-testid="job-id"]`);
      await cell.waitFor();
      const text = await cell.textContent();
      if (text !== j.id) throw new Error(`the jobs list shows ${text} for job ${j.id}`);
    }
    await page.locator(`tr[data-job="${a.id}"]`).getByRole('button', { name: `Copy job id ${a.id}` }).waitFor();
    await shot(page, 'ids-jobs');
    // A paused update of one twin is named on the overview.
    await until('a task of the twin running', async () => (await api('GET', `/v1/jobs/${a.id}`)).job.status?.taskStates?.RUNNING === 2);
    const spec = (await api('GET', `/v1/jobs/${a.id}/config`)).spec;
    const upd = (await api('POST', `/v1/jobs/${a.id}/updates?batchSize=1&startPaused=true`, { ...spec, task: { ...spec.task, env: { ...spec.task?.env, V: '2' } } })).update;
    // And a paused migration of the other.
    await until('the other twin running', async () => (await api('GET', `/v1/jobs/${b.id}`)).job.status?.taskStates?.RUNNING === 2);
    const mig = (await api('POST', '/v1/migrations', { jobId: b.id, toCluster: 'spare', startPaused: true })).migration;
    const ov = await open(browser, '/ui/');
    const migEntry = ov.locator(`li[data-migration="${mig.id}"] [data-job-ref="${b.id}"]`);
    await migEntry.getByText(name).waitFor({ timeout: 15000 });
    const migShown = await migEntry.textContent();
    if (!migShown.includes(name) || !migShown.includes(b.id.slice(-12))) throw new Error(`the overview names the migration's job "${migShown}"`);
    const entry = ov.locator(`li[data-update="${upd.id}"]`);
    await entry.waitFor({ timeout: 15000 });
    const ref = entry.locator(`[data-job-ref="${a.id}"]`);
    await ref.getByText(name).waitFor();
    const shown = await ref.textContent();
    if (!shown.includes(name) || !shown.includes(a.id.slice(-12))) throw new Error(`the overview names the update's job "${shown}"`);
    if ((await ref.locator('code').getAttribute('title')) !== a.id) throw new Error('the whole id is not on the overview entry');
    console.log(`overview update entry: ${(await entry.textContent()).replace(/\s+/g, ' ').slice(0, 120)}`);
    await shot(ov, 'ids-overview');
    await api('POST', `/v1/updates/${upd.id}:abort`);
    await api('POST', `/v1/migrations/${mig.id}:abort`, { region: mig.region });
    await api('POST', `/v1/jobs/${a.id}/stop`);
    await api('POST', `/v1/jobs/${b.id}/stop`);
    page.assertNoErrors();
    ov.assertNoErrors();
  },

  // A migration from the UI's migrations page: a paused one is listed by its
  // job's name, resumed, followed to SUCCEEDED with its report, and rolled
  // back; the job's page lists it and does not say it was never updated.
  async migrations(browser) {
    const name = 'mig-' + Date.now();
    const job = (
      await api('POST', '/v1/jobs', {
        ...simJob(name),
        type: 'service',
        instances: 2,
        clusters: { prefer: ['sim'] },
        task: { command: 'sim', resources: { cpu: 0.1, memMb: 16 } },
      })
    ).job;
    await until('both instances running', async () => (await api('GET', `/v1/jobs/${job.id}`)).job.status?.taskStates?.RUNNING === 2);
    const m = (await api('POST', '/v1/migrations', { jobId: job.id, toCluster: 'spare', startPaused: true, batchSize: 1 })).migration;
    const page = await open(browser, '/ui/migrations');
    await page.getByRole('heading', { level: 1, name: 'Migrations' }).waitFor();
    const card = page.locator(`article[data-migration="${m.id}"]`);
    await card.waitFor();
    // The card is drawn at once, its job named by id until the job's name is read.
    await card.locator('h2', { hasText: name }).waitFor({ timeout: 10000 }).catch(() => {});
    const head = await card.locator('h2').textContent();
    if (!head.includes(name) || !head.includes('spare')) throw new Error(`the migration is shown as "${head}"`);
    await card.locator('[data-state="PAUSED"]').waitFor();
    await shot(page, 'migration-paused');
    await card.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('dialog', { name: /^Resume the migration/ }).getByRole('button', { name: 'Confirm' }).click();
    const start = Date.now();
    await page.locator(`article[data-migration="${m.id}"][data-state="SUCCEEDED"]`).waitFor({ timeout: 60000 });
    console.log(`migration SUCCEEDED on the page ${Date.now() - start} ms after Resume`);
    const row = card.locator(`table.report tr[data-job="${job.id}"]`);
    await card.locator('summary').click(); // an ended migration's report is folded
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    if (cells[1] !== 'sim' || !cells[2].startsWith('2 / 2')) throw new Error('report row: ' + cells.join(' | '));
    await shot(page, 'migration-succeeded');
    // The job's page: the migration, and no "never updated".
    const jp = await open(browser, `/ui/jobs/${job.id}`);
    await jp.locator(`#migrations li[data-migration="${m.id}"]`).waitFor();
    if ((await jp.locator('#updates').textContent()).includes('never updated')) throw new Error('the migrated job says it was never updated');
    // Roll back from the migrations page.
    await card.getByRole('button', { name: 'Roll back' }).click();
    await page.getByRole('dialog', { name: /^Roll back the migration/ }).getByRole('button', { name: 'Confirm' }).click();
    await page.locator(`article[data-migration="${m.id}"][data-state="ROLLED_BACK"]`).waitFor({ timeout: 60000 });
    const back = (await api('GET', `/v1/jobs/${job.id}/tasks`)).tasks.map((t) => t.cluster);
    if (back.some((c) => c !== 'sim')) throw new Error('after the rollback tasks run on ' + back.join(', '));
    if (await card.getByRole('button', { name: 'Roll back' }).count()) throw new Error('a rolled back migration offers Roll back');
    await shot(page, 'migration-rolled-back');
    await api('POST', `/v1/jobs/${job.id}/stop`);
    page.assertNoErrors();
    jp.assertNoErrors();
  },

  // A job of 1,000 tasks held by maxRunning: its page stays short (a page
  // of tasks, a page of events), finds one task by number or by state, says
  // why the held tasks wait, and shows the newest stored events first.
  async 'job-detail'(browser) {
    const n = 1000;
    const job = (
      await api('POST', '/v1/jobs', {
        ...simJob('thousand'),
        instances: n,
        maxRunning: 10,
        task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 0.1, memMb: 16 } },
      })
    ).job;
    await until('10 tasks running', async () => (await api('GET', `/v1/jobs/${job.id}`)).job.status?.taskStates?.RUNNING === 10, 60000);
    // The newest stored event, read the long way (forwards from the start),
    // once the job has more than the old panel's 200 (events are stored
    // with the region's next write).
    let stored = 0;
    let newest;
    await until(
      'more than 200 stored events',
      async () => {
        let after = 0;
        stored = 0;
        for (;;) {
          const r = await api('GET', `/v1/jobs/${job.id}/events?limit=10000&afterSeq=${after}`);
          stored += r.events?.length ?? 0;
          if (r.events?.length) newest = r.events[r.events.length - 1];
          if (!r.more || !r.events?.length) break;
          after = r.events[r.events.length - 1].seq;
        }
        return stored > 200;
      },
      30000,
    );
    const page = await open(browser, `/ui/jobs/${job.id}`);
    await page.locator('table.tasks tbody tr').nth(49).waitFor();
    await page.locator(`#events tr[data-seq="${newest.seq}"]`).waitFor({ timeout: 15000 });
    console.log(`${stored} stored events; the newest (seq ${newest.seq}) is on the page`);
    await page.getByText('held by the job\'s maxRunning').first().waitFor();
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    console.log(`page of a ${n}-task job: ${height} px tall`);
    await shot(page, 'job-detail');
    if (height > 4500) throw new Error(`the page is ${height} px tall`);
    // One task by its number.
    await page.getByLabel('Task #').fill('777');
    await page.locator('table.tasks tbody tr[data-instance="777"]').waitFor();
    await until('only task 777 shown', async () => (await page.locator('table.tasks tbody tr').count()) === 1, 5000);
    const why = await page.locator('tr[data-instance="777"] td.reason').textContent();
    if (!why.includes('maxRunning')) throw new Error(`task 777 says "${why}"`);
    // By state, a page at a time.
    await page.getByLabel('Task #').fill('');
    await page.locator('#tasks select[name="state"]').selectOption('RUNNING');
    await until('the running tasks', async () => (await page.locator('table.tasks tbody tr[data-state="RUNNING"]').count()) === 10, 10000);
    await page.locator('#tasks select[name="state"]').selectOption('');
    await page.getByRole('navigation', { name: 'Task pages' }).getByRole('button', { name: 'Next page' }).click();
    await page.locator('table.tasks tbody tr[data-instance="50"]').waitFor();
    await page.getByText(`51–100 of ${n.toLocaleString('en-US')}`).waitFor();
    await api('POST', `/v1/jobs/${job.id}/stop`);
    page.assertNoErrors();
  },

  // A task's page shows what is true of it now. A service task's goal
  // (SUCCEEDED, for every task) is not shown; a task held by maxRunning
  // says so. Stale fields the API keeps from earlier runs are checked on
  // answers the test gives the page in place of the server's (the sim
  // cluster has no health checks): a healthy running task with reason
  // UNHEALTHY from its last run, an ended task with a retry time.
  async 'task-detail'(browser) {
    const svc = (await api('POST', '/v1/jobs', { ...simJob('svc-detail'), type: 'service', instances: 1, task: { command: 'sim', resources: { cpu: 0.1, memMb: 16 } } })).job;
    const held = (
      await api('POST', '/v1/jobs', {
        ...simJob('held'),
        instances: 3,
        maxRunning: 1,
        task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 0.1, memMb: 16 } },
      })
    ).job;
    await until('the service task running', async () => (await api('GET', `/v1/jobs/${svc.id}/tasks/0`)).task.state === 'TASK_STATE_RUNNING');
    const stateFact = (page) => page.locator('.fact').filter({ has: page.getByText('State', { exact: true }) }).locator('dd');
    const page = await open(browser, `/ui/jobs/${svc.id}/tasks/0`);
    await page.getByRole('heading', { level: 1, name: /Task 0/ }).waitFor();
    await page.locator(`[data-job-ref="${svc.id}"]`).getByText('svc-detail').waitFor();
    const st = await stateFact(page).textContent();
    if (st !== 'RUNNING') throw new Error(`a running service task's state reads "${st}"`);
    // A simulated cluster keeps no logs: said plainly, not as an error.
    await page.getByTestId('no-logs').waitFor();
    if (await page.getByRole('alert').count()) throw new Error('the sim task page shows an error: ' + (await page.getByRole('alert').allTextContents()).join('; '));
    // Held by maxRunning.
    await until('one task of the held job running', async () => (await api('GET', `/v1/jobs/${held.id}`)).job.status?.taskStates?.RUNNING === 1);
    const waiting = (await api('GET', `/v1/jobs/${held.id}/tasks?states=TASK_STATE_INITIALIZED`)).tasks[0];
    await page.goto(BASE + `/ui/jobs/${held.id}/tasks/${waiting.instance ?? 0}`);
    const note = page.getByTestId('task-reason');
    await note.waitFor();
    const said = await note.textContent();
    if (!said.includes('maxRunning')) throw new Error(`a task held by maxRunning says "${said}"`);
    console.log(`held task: ${said}`);
    await shot(page, 'task-held');
    // Stale fields, from answers made here.
    const real = (await api('GET', `/v1/jobs/${svc.id}/tasks/0`)).task;
    const answer = (task) => (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ task }) });
    const future = new Date(Date.now() + 3600e3).toISOString();
    await page.route(`**/v1/jobs/${svc.id}/tasks/0`, answer({ ...real, run: 2, health: 'HEALTH_STATE_HEALTHY', reason: 'UNHEALTHY', message: 'health check failed 3 times' }));
    await page.goto(BASE + `/ui/jobs/${svc.id}/tasks/0`);
    await page.getByText('Previous run').waitFor();
    if (await page.getByTestId('task-reason').count()) throw new Error('a healthy running task shows its last run\'s reason as its own: ' + (await page.getByTestId('task-reason').textContent()));
    await page.unroute(`**/v1/jobs/${svc.id}/tasks/0`);
    await page.route(`**/v1/jobs/${svc.id}/tasks/0`, answer({ ...real, state: 'TASK_STATE_FAILED', goalState: 'TASK_STATE_FAILED', exitCode: 1, reason: 'EXIT_NONZERO', retryAfter: future }));
    await page.goto(BASE + `/ui/jobs/${svc.id}/tasks/0`);
    await page.getByTestId('task-reason').getByText('EXIT_NONZERO').waitFor();
    if (await page.getByText('Retry after').count()) throw new Error('an ended task shows a retry time');
    await page.unroute(`**/v1/jobs/${svc.id}/tasks/0`);
    await api('POST', `/v1/jobs/${svc.id}/stop`);
    await api('POST', `/v1/jobs/${held.id}/stop`);
    page.assertNoErrors();
  },

  // Hosts, given here by a stand-in answer of 230 hosts (the cluster has
  // 21): a page at a time, sorted by a column; a last seen ahead of the
  // browser's clock reads "just now"; a full host is not drawn in alarm
  // colours. On a real region at 390 px, Drain is on screen.
  async hosts(browser) {
    const now = Date.now();
    const many = Array.from({ length: 230 }, (_, i) => ({
      id: `big/host-${i}`,
      hostname: `host-${i}`,
      cluster: 'big',
      kind: 'sim',
      state: 'HOST_STATE_UP',
      region: 'east',
      capacity: { cpu: 8, memMb: 8192 },
      allocated: i === 7 ? { cpu: 8, memMb: 8192 } : { cpu: i % 8, memMb: 1024 },
      tasks: i === 7 ? 40 : i % 13,
      lastSeen: new Date(now + (i === 3 ? 5000 : -2000)).toISOString(),
    }));
    const page = await open(browser);
    await page.route('**/v1/hosts', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ hosts: many }) }));
    await page.goto(BASE + '/ui/hosts?sort=host');
    await page.getByText('1–50 of 230').waitFor();
    if ((await page.locator('table.hosts tbody tr').count()) !== 50) throw new Error('a page holds other than 50 hosts');
    const seen = await page.locator('tr[data-host="big/host-3"] td[data-label="Last seen"]').textContent();
    if (seen !== 'just now') throw new Error(`a host seen ahead of the browser's clock reads "${seen}"`);
    if (await page.locator('tr[data-host="big/host-7"] .bar.hot').count()) throw new Error('a full host is drawn in alarm colours');
    await page.getByRole('navigation', { name: 'Host pages' }).getByRole('button', { name: 'Next page' }).click();
    await page.getByText('51–100 of 230').waitFor();
    await page.getByRole('button', { name: 'Tasks' }).click(); // ascending
    await page.getByRole('button', { name: 'Tasks' }).click(); // descending
    await until('host-7 (most tasks) first', async () => (await page.locator('table.hosts tbody tr').first().getAttribute('data-host')) === 'big/host-7', 5000);
    await shot(page, 'hosts-paged');
    await page.unroute('**/v1/hosts');
    const narrow = await open(browser, '/ui/hosts?region=west', { width: 390 });
    const row = narrow.locator('tr[data-host="sim/sim-3"][data-region="west"]');
    await row.waitFor();
    const drain = row.getByRole('button', { name: 'Drain' });
    await drain.waitFor();
    const box = await drain.boundingBox();
    const wide = await narrow.evaluate(() => document.documentElement.scrollWidth);
    console.log(`at 390 px: Drain at x ${Math.round(box.x)}–${Math.round(box.x + box.width)}, page ${wide} px wide`);
    if (box.x + box.width > 390 || wide > 390) throw new Error('Drain is off screen at 390 px');
    await shot(narrow, 'hosts-narrow');
    page.assertNoErrors();
    narrow.assertNoErrors();
  },

  // Rough states: an unknown job's page says so once; with the server out of
  // reach a page says that once (and not that nothing matches), and comes
  // back by itself.
  async rough(browser) {
    const page = await open(browser, '/ui/jobs/01a00000-0000-7000-8000-000000000000');
    await page.getByRole('alert').first().waitFor();
    await page.waitForTimeout(1500);
    const alerts = await page.getByRole('alert').allTextContents();
    console.log(`unknown job: ${JSON.stringify(alerts)}`);
    if (alerts.length !== 1) throw new Error(`an unknown job shows ${alerts.length} errors`);
    await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Hosts' }).click();
    await page.getByTestId('unreachable').first().waitFor({ timeout: 10000 });
    await page.waitForTimeout(2500); // the hosts page reads again every 2 s
    const down = await page.getByRole('alert').allTextContents();
    console.log(`server down: ${JSON.stringify(down)}`);
    if (down.length !== 1) throw new Error(`with the server down the page shows ${down.length} errors`);
    if (await page.getByText('No host matches.').count()) throw new Error('with the server down the page says no host matches');
    await shot(page, 'server-down');
    await page.unroute('**/v1/**');
    await page.locator('table.hosts tr[data-host]').first().waitFor({ timeout: 15000 });
    await until('the error gone', async () => (await page.getByTestId('unreachable').count()) === 0, 10000);
    page.assertNoErrors();
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
    // More new jobs: each appears; the page reads its own page again (one
    // page, newest first), never the list beyond it.
    const lists = [];
    page.on('request', (req) => {
      const u = new URL(req.url());
      if (u.pathname === '/v1/jobs' && req.method() === 'GET') lists.push(u.searchParams);
    });
    const more = [];
    for (let i = 0; i < 10; i++) more.push((await api('POST', '/v1/jobs', simJob(`live-more-${i}-${Date.now()}`))).job);
    for (const j of more) await page.locator(`tr[data-job="${j.id}"]`).waitFor({ timeout: 15000 });
    console.log(`10 more jobs appeared; the page read its page ${lists.length} times meanwhile`);
    for (const p of lists) {
      const limit = Number(p.get('limit'));
      if (!limit || limit > 100 || p.get('pageToken')) throw new Error(`the page read more than its page for new jobs: /v1/jobs?${p}`);
    }
    page.assertNoErrors();
  },

  // A periodic job: the job list says when it runs next; its page shows
  // the schedule in place of tasks, launches a run with "Run now" (listed
  // among its runs, whose page links back), shows a refused action's
  // error in its dialog, is suspended and resumed, and offers none of
  // these once stopped.
  async periodic(browser) {
    const name = 'nightly-' + Date.now();
    const job = (
      await api('POST', '/v1/jobs', {
        ...simJob(name),
        instances: 1,
        schedule: { cron: '* * * * *', timeZone: 'Europe/Berlin', concurrencyPolicy: 'CONCURRENCY_POLICY_FORBID', keepRuns: 3 },
        task: { command: 'sim', env: { PELOTON_SIM_DURATION: '3s' }, resources: { cpu: 0.1, memMb: 16 } },
      })
    ).job;
    const list = await open(browser, '/ui/jobs?q=' + name);
    const next = list.locator(`tr[data-job="${job.id}"] [data-next-run]`);
    await next.waitFor();
    const nextText = await next.textContent();
    if (!/^next run (in \d+s|due now)$/.test(nextText)) throw new Error(`the job list says "${nextText}" of a job that runs every minute`);
    console.log(`job list: ${nextText}`);

    const page = await open(browser, `/ui/jobs/${job.id}`);
    const schedule = page.locator('#schedule');
    await schedule.getByTestId('cron').getByText('* * * * *').waitFor();
    await schedule.getByText('Europe/Berlin').waitFor();
    await schedule.getByText('forbid').waitFor();
    const nextRun = await schedule.getByTestId('next-run').textContent();
    if (!/\((in \d+s|due now)\)$/.test(nextRun)) throw new Error(`the schedule's next run reads "${nextRun}"`);
    console.log(`schedule: next run ${nextRun}`);
    await page.getByTestId('no-tasks').waitFor();
    if (await page.locator('table.tasks').count()) throw new Error('a periodic job shows a task table');
    if (await page.getByRole('button', { name: 'Stop tasks…' }).count()) throw new Error('a periodic job offers "Stop tasks…"');
    await shot(page, 'periodic-job');

    // Run now: the new run is named on the page and listed among the runs, by hand.
    const start = Date.now();
    await schedule.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('dialog', { name: `Run ${name} now?` }).getByRole('button', { name: 'Confirm' }).click();
    const ref = page.getByTestId('run-launched').locator('[data-job-ref]');
    await ref.waitFor();
    const runId = await ref.getAttribute('data-job-ref');
    const row = page.locator(`table.runs tr[data-run="${runId}"]`);
    await row.waitFor({ timeout: 10000 });
    console.log(`run ${runId} listed ${Date.now() - start} ms after Run now`);
    const cells = await row.locator('td').allTextContents();
    if (cells[1] !== 'by hand') throw new Error('the run by hand is listed as ' + cells.join(' | '));
    const run = (await api('GET', `/v1/jobs/${runId}`)).job;
    if (run.status?.runOf?.jobId !== job.id) throw new Error('the run is not linked to its job: ' + JSON.stringify(run.status));
    await page.locator(`table.runs tr[data-run="${runId}"][data-state="SUCCEEDED"]`).waitFor({ timeout: 30000 });
    console.log(`run SUCCEEDED in the runs table ${Date.now() - start} ms after Run now`);
    await shot(page, 'periodic-run-now');
    // The run's page links back to the periodic job.
    const rp = await open(browser, `/ui/jobs/${runId}`);
    const runOf = rp.getByTestId('run-of');
    await runOf.getByText('by hand').waitFor();
    await runOf.locator(`[data-job-ref="${job.id}"]`).getByText(name).waitFor();
    await runOf.locator(`[data-job-ref="${job.id}"] a`).click();
    await rp.locator('#schedule').waitFor();
    if (!rp.url().endsWith(`/ui/jobs/${job.id}`)) throw new Error('the run\'s link went to ' + rp.url());

    // A refused action says why in its dialog (the answer made here).
    await page.route(`**/v1/jobs/${job.id}/run`, (route) =>
      route.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify({ code: 9, message: 'no run today' }) }),
    );
    await schedule.getByRole('button', { name: 'Run now' }).click();
    const refused = page.getByRole('dialog', { name: `Run ${name} now?` });
    await refused.getByRole('button', { name: 'Confirm' }).click();
    await refused.getByRole('alert').getByText('no run today').waitFor();
    await refused.getByRole('button', { name: 'Cancel' }).click();
    await page.unroute(`**/v1/jobs/${job.id}/run`);

    // Suspend, then resume.
    await schedule.getByRole('button', { name: 'Suspend' }).click();
    await page.getByRole('dialog', { name: `Suspend ${name}?` }).getByRole('button', { name: 'Confirm' }).click();
    await schedule.getByTestId('suspended').getByText('suspended').waitFor({ timeout: 10000 });
    await schedule.getByTestId('next-run').getByText('none while suspended').waitFor();
    if (!(await api('GET', `/v1/jobs/${job.id}`)).job.status?.periodic?.suspended) throw new Error('the API does not say the job is suspended');
    await list.locator(`tr[data-job="${job.id}"] [data-next-run]`).getByText('suspended').waitFor({ timeout: 15000 });
    await shot(page, 'periodic-suspended');
    await schedule.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('dialog', { name: `Resume ${name}?` }).getByRole('button', { name: 'Confirm' }).click();
    await schedule.getByRole('button', { name: 'Suspend' }).waitFor({ timeout: 10000 });
    await until('the next run shown again', async () => /\((in \d+s|due now)\)$/.test(await schedule.getByTestId('next-run').textContent()), 10000);
    if ((await schedule.getByTestId('suspended').textContent()) !== 'no') throw new Error('resumed, the job still reads suspended');
    if ((await api('GET', `/v1/jobs/${job.id}`)).job.status?.periodic?.suspended) throw new Error('the API says the resumed job is suspended');
    console.log('suspended and resumed from the job page');

    // Stopped, it offers none of its actions.
    await api('POST', `/v1/jobs/${job.id}/stop`);
    await page.getByRole('heading', { level: 1 }).locator('[data-state="KILLED"]').waitFor({ timeout: 15000 });
    await until('no Run now, Suspend or Resume', async () => (await schedule.getByRole('button').count()) === 0, 10000);
    await schedule.getByTestId('next-run').getByText('the job was stopped').waitFor();
    for (const p of [list, page, rp]) p.assertNoErrors();
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

  // The actions of the CLI, from the UI: a job created from a spec (a bad
  // one refused with its field errors listed by line, nothing created),
  // scaled, updated; tasks stopped (refused beyond the SLA, then forced);
  // a host drained with a deadline, taken down and brought up. (A pool is
  // edited in the pools scenario, which makes pools.)
  async actions(browser) {
    const name = 'act-' + Date.now();
    const page = await open(browser, '/ui/jobs');
    await page.getByRole('button', { name: 'New job…' }).click();
    const create = page.getByRole('dialog', { name: 'Create a job' });
    const editor = create.getByLabel('Spec (JSON)');
    const bad = { name, instances: 0, region: 'east', task: { command: 'sim', resources: { cpu: 0.1 } } };
    await editor.fill(JSON.stringify(bad, null, 2));
    await create.getByRole('button', { name: 'Confirm' }).click();
    const problems = create.getByTestId('field-errors');
    await problems.waitFor();
    for (const f of ['instances', 'task.resources.mem_mb']) await problems.locator(`li[data-field="${f}"]`).waitFor();
    const line = await problems.locator('li[data-field="instances"]').getByRole('button').textContent();
    if (line !== 'line 3') throw new Error(`the instances problem points at "${line}", want line 3`);
    console.log('refused spec: ' + (await problems.textContent()).replace(/\s+/g, ' '));
    await shot(page, 'actions-field-errors');
    if (((await api('GET', '/v1/jobs?name=' + name)).jobs ?? []).length) throw new Error('a refused spec created a job');
    const good = { ...bad, type: 'JOB_TYPE_SERVICE', instances: 3, clusters: { prefer: ['sim'] }, task: { command: 'sim', resources: { cpu: 0.1, memMb: 16 } } };
    await editor.fill(JSON.stringify(good, null, 2));
    await create.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const id = decodeURIComponent(page.url().split('/ui/jobs/')[1]);
    await until('3 instances running', async () => (await api('GET', `/v1/jobs/${id}`)).job.status?.taskStates?.RUNNING === 3);
    // Scale to 4.
    await page.getByRole('button', { name: 'Scale…' }).click();
    const scale = page.getByRole('dialog', { name: `Scale ${name}` });
    await scale.getByLabel('Instances').fill('4');
    await scale.getByRole('button', { name: 'Confirm' }).click();
    await until('4 instances running', async () => (await api('GET', `/v1/jobs/${id}`)).job.status?.taskStates?.RUNNING === 4, 30000);
    await until('the scale update done', async () => (await api('GET', `/v1/jobs/${id}/updates`)).updates?.every((u) => u.state === 'UPDATE_STATE_SUCCEEDED'));
    // Update: the editor holds the current spec; the new one starts paused.
    await page.getByRole('button', { name: 'Update…' }).click();
    const upd = page.getByRole('dialog', { name: `Update ${name}` });
    const spec = await until('the current spec in the editor', async () => {
      const t = await upd.getByLabel('Spec (JSON)').inputValue();
      return t ? JSON.parse(t) : false;
    });
    if (spec.instances !== 4) throw new Error('the update editor holds instances ' + spec.instances);
    await upd.getByLabel('Spec (JSON)').fill(JSON.stringify({ ...spec, task: { ...spec.task, env: { V: '2' } } }, null, 2));
    await upd.getByLabel('Start paused').check();
    await upd.getByRole('button', { name: 'Confirm' }).click();
    const paused = await until('a paused update', async () => (await api('GET', `/v1/jobs/${id}/updates`)).updates?.find((u) => u.paused));
    await page.locator('#updates').getByText('PAUSED').first().waitFor();
    await api('POST', `/v1/updates/${paused.id}:abort`);
    // Stop two instances at once: the SLA (1 unavailable) refuses; forced, they stop.
    await until('the aborted update ended', async () => !(await api('GET', `/v1/jobs/${id}`)).job.status?.updateId || (await api('GET', `/v1/updates/${paused.id}`)).update.state !== 'UPDATE_STATE_PAUSED');
    // A canary update waits for its promotion; Promote on the job page moves the rest.
    const canary = (await api('POST', `/v1/jobs/${id}/updates?batchSize=1&canary=1`, { ...spec, task: { ...spec.task, env: { V: '3' } } })).update;
    const canaryRow = page.locator(`#updates tr[data-update="${canary.id}"]`);
    await until('the canary waiting for promotion', async () => (await api('GET', `/v1/updates/${canary.id}`)).update.message?.includes('waiting for promotion'));
    await canaryRow.locator('[data-canary]').getByText('waiting for promotion').waitFor();
    await canaryRow.getByRole('button', { name: 'Promote' }).click();
    await page.getByRole('dialog', { name: `Promote update to v${canary.toVersion}?` }).getByRole('button', { name: 'Confirm' }).click();
    await until('the promoted canary update done', async () => (await api('GET', `/v1/updates/${canary.id}`)).update.state === 'UPDATE_STATE_SUCCEEDED');
    const promoted = (await api('GET', `/v1/updates/${canary.id}`)).update;
    if (!promoted.promoted || !promoted.promotedBy) throw new Error('the promoted update does not say who promoted it: ' + JSON.stringify(promoted));
    await canaryRow.locator('[data-canary]').getByText('promoted by').waitFor();
    console.log('canary update promoted from the job page by ' + promoted.promotedBy);
    if (await canaryRow.getByRole('button', { name: 'Promote' }).count()) throw new Error('a promoted update offers Promote');
    // An extra canary from the Update dialog: an instance beside the job's four.
    await page.getByRole('button', { name: 'Update…' }).click();
    const extra = page.getByRole('dialog', { name: `Update ${name}` });
    const current = await until('the current spec in the editor', async () => {
      const t = await extra.getByLabel('Spec (JSON)').inputValue();
      return t ? JSON.parse(t) : false;
    });
    await extra.getByLabel('Spec (JSON)').fill(JSON.stringify({ ...current, task: { ...current.task, env: { V: '4' } } }, null, 2));
    await extra.getByLabel('Canaries', { exact: true }).fill('1');
    await extra.getByLabel('Extra canaries, beside the job').check();
    await extra.getByRole('button', { name: 'Confirm' }).click();
    const extraUpdate = await until('an extra canary update', async () => (await api('GET', `/v1/jobs/${id}/updates`)).updates?.find((u) => u.canaryExtra));
    const extraRow = page.locator(`#updates tr[data-update="${extraUpdate.id}"]`);
    await extraRow.locator('[data-canary]').getByText('1 extra canary (instances 4–4), waiting for promotion').waitFor();
    await until('five instances while the extra canary waits', async () => (await api('GET', `/v1/jobs/${id}`)).job.status?.taskStates?.RUNNING === 5, 30000);
    await extraRow.getByRole('button', { name: 'Promote' }).click();
    await page.getByRole('dialog', { name: `Promote update to v${extraUpdate.toVersion}?` }).getByRole('button', { name: 'Confirm' }).click();
    await until('the extra canary gone, four on the new config', async () => {
      const u = (await api('GET', `/v1/updates/${extraUpdate.id}`)).update;
      const j = (await api('GET', `/v1/jobs/${id}`)).job;
      return u.state === 'UPDATE_STATE_SUCCEEDED' && j.spec.instances === 4 && j.status?.taskStates?.RUNNING === 4;
    }, 30000);
    console.log('extra canary update promoted from the job page');
    await page.getByRole('button', { name: 'Stop tasks…' }).click();
    const stop = page.getByRole('dialog', { name: `Stop tasks of ${name}` });
    await stop.getByLabel('Instances (such as 0 2 5-9)').fill('0-1');
    await stop.getByRole('button', { name: 'Confirm' }).click();
    await stop.getByText('SLA').first().waitFor();
    console.log('stop beyond the SLA: ' + (await stop.locator('.error').textContent()));
    await stop.getByLabel('Force: beyond the SLA').check();
    await stop.getByRole('button', { name: 'Confirm' }).click();
    await until('instances 0 and 1 killed', async () => {
      const t = (await api('GET', `/v1/jobs/${id}/tasks`)).tasks;
      return t.filter((x) => (x.instance ?? 0) <= 1).every((x) => x.state === 'TASK_STATE_KILLED');
    });
    // One task restarted from its page: a new run, still running.
    const before = (await api('GET', `/v1/jobs/${id}/tasks/2`)).task.run ?? 0;
    const rp = await open(browser, `/ui/jobs/${id}/tasks/2`);
    await rp.getByRole('button', { name: 'Restart task' }).click();
    await rp.getByRole('dialog', { name: 'Restart task 2?' }).getByRole('button', { name: 'Confirm' }).click();
    await until('task 2 on its next run', async () => {
      const t = (await api('GET', `/v1/jobs/${id}/tasks/2`)).task;
      return (t.run ?? 0) > before && t.state === 'TASK_STATE_RUNNING';
    });
    console.log(`task 2 restarted from its page: run ${before} -> ${(await api('GET', `/v1/jobs/${id}/tasks/2`)).task.run}`);
    // One task from its page.
    const tp = await open(browser, `/ui/jobs/${id}/tasks/3`);
    await tp.getByRole('button', { name: 'Stop task' }).click();
    await tp.getByRole('dialog', { name: 'Stop task 3?' }).getByRole('button', { name: 'Confirm' }).click();
    await until('task 3 killed', async () => (await api('GET', `/v1/jobs/${id}/tasks/3`)).task.state === 'TASK_STATE_KILLED');
    await tp.locator('[data-state="KILLED"]').first().waitFor({ timeout: 10000 });
    await api('POST', `/v1/jobs/${id}/stop`);

    // A host: drained with a deadline, down, up.
    const hp = await open(browser, '/ui/hosts?region=west');
    const row = hp.locator('tr[data-host="sim/sim-1"][data-region="west"]');
    await row.getByRole('button', { name: 'Drain' }).click();
    const drain = hp.getByRole('dialog', { name: 'Drain sim/sim-1?' });
    await drain.getByLabel('Reason').fill('disk swap');
    await drain.getByLabel(/^Deadline/).fill('10');
    await drain.getByRole('button', { name: 'Confirm' }).click();
    const drained = await until('the drain with its deadline', async () => (await api('GET', '/v1/hosts?hostId=sim/sim-1')).hosts.find((h) => h.region === 'west' && h.draining));
    const ahead = (Date.parse(drained.drainDeadline) - Date.now()) / 60000;
    if (!(ahead > 8 && ahead <= 10)) throw new Error(`the drain's deadline is ${drained.drainDeadline}, want in 10 minutes`);
    await hp.locator('tr[data-host="sim/sim-1"][data-region="west"][data-state="DRAINED"]').waitFor({ timeout: 30000 });
    await row.getByRole('button', { name: 'Down' }).click();
    await hp.getByRole('dialog', { name: 'Mark sim/sim-1 down?' }).getByRole('button', { name: 'Confirm' }).click();
    await hp.locator('tr[data-host="sim/sim-1"][data-region="west"][data-state="DOWN"]').waitFor({ timeout: 15000 });
    await shot(hp, 'actions-host-down');
    await row.getByRole('button', { name: 'Up' }).click();
    await hp.getByRole('dialog', { name: 'Bring sim/sim-1 up?' }).getByRole('button', { name: 'Confirm' }).click();
    await hp.locator('tr[data-host="sim/sim-1"][data-region="west"][data-state="UP"]').waitFor({ timeout: 15000 });

    for (const p of [page, tp, hp]) p.assertNoErrors();
  },

  // A drill started from the UI fills in its report as it goes.
  async drill(browser) {
    // Work in central that the drill relocates.
    const original = (await api('POST', '/v1/jobs', {
      ...simJob('relocatable'),
      region: 'central',
      failover: { mode: 'MODE_ANY' },
      task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 1, memMb: 64 } },
    })).job;
    const page = await open(browser, '/ui/regions');
    await page.locator('tr[data-region="central"]').waitFor();
    // Gossip probes of the other regions' members, as this server sees them.
    const probes = page.locator('tr[data-region] [data-probes]').first();
    await probes.waitFor();
    const probeText = await probes.textContent();
    if (!/probes over \S+: \d+ sent, \d+ lost/.test(probeText)) throw new Error('a member\'s probes read "' + probeText + '"');
    console.log('member probes: ' + probeText);
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
            if (k === 'detection') {
              await shot(page, 'drill-detected');
              // Central is failed: no fail back to it, nor to a region none of whose jobs moved.
              const offered = await page.getByRole('button', { name: 'Fail back' }).count();
              if (offered) throw new Error(`"Fail back" offered ${offered} times while central is failed`);
              // Nor is central's failover plan "ready" while it is failed.
              const plan = page.locator('li[data-plan="central"]');
              await plan.getByText('not ready while failed').waitFor({ timeout: 5000 });
              console.log('central\'s plan while failed: ' + (await plan.textContent()).replace(/\s+/g, ' ').slice(0, 160));
            }
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
    // The drill's failback stops the originals; the relocated copy runs on
    // in its new region. So central, alive again, is offered a fail back,
    // and the regions none of whose jobs moved are not.
    const central = page.locator('tr[data-region="central"]');
    await central.getByRole('button', { name: 'Fail back' }).waitFor({ timeout: 15000 });
    for (const r of ['east', 'west']) {
      if (await page.locator(`tr[data-region="${r}"]`).getByRole('button', { name: 'Fail back' }).count()) throw new Error(`"Fail back" offered to ${r}`);
    }
    // The original links to its copy, which links back.
    const orig = (await api('GET', `/v1/jobs/${original.id}`)).job;
    const to = orig.status?.movedTo;
    if (!to?.jobId) throw new Error('the API names no copy of the relocated job: ' + JSON.stringify(orig.status));
    const jp = await open(browser, `/ui/jobs/${original.id}`);
    const moved = jp.getByTestId('moved-to');
    await moved.waitFor();
    console.log('relocated job: ' + (await moved.textContent()));
    await shot(jp, 'drill-moved-to');
    await moved.locator(`[data-job-ref="${to.jobId}"] a`).click();
    await jp.getByTestId('moved-from').waitFor();
    if (!jp.url().endsWith(`/ui/jobs/${to.jobId}`)) throw new Error('the link went to ' + jp.url());
    // Fail back from the page: it says what moved, and is offered no more.
    await central.getByRole('button', { name: 'Fail back' }).click();
    await page.getByRole('dialog', { name: 'Fail back to central?' }).getByRole('button', { name: 'Confirm' }).click();
    const result = page.getByTestId('failback-result');
    await result.waitFor();
    const said = (await result.textContent()).replace(/\s+/g, ' ');
    console.log('fail back: ' + said);
    if (!/\d+ jobs moved/.test(said) || !said.includes(`copy ${to.jobId} in ${to.region} stopped`)) throw new Error('fail back said: ' + said);
    await until('no fail back offered', async () => (await page.getByRole('button', { name: 'Fail back' }).count()) === 0, 15000);
    await shot(page, 'drill-failed-back');
    page.assertNoErrors();
    jp.assertNoErrors();
  },

  // A drill of the UI's own region (east): cut off, it sees the others
  // failed. Every page says which regions it cannot reach and that their
  // jobs are missing, the jobs page does not claim every region, and the
  // overview draws no empty figures for them; healed, the note goes.
  async isolated(browser) {
    const drill = (await api('POST', '/v1/drills', { region: 'east', durationSeconds: 15 })).drill;
    const page = await open(browser, '/ui/');
    const note = page.getByTestId('cut-off');
    await note.waitFor({ timeout: 30000 });
    await until('both others named', async () => /cannot reach central and west/.test(await note.textContent()), 15000);
    console.log('cut off: ' + (await note.textContent()));
    for (const r of ['central', 'west']) await page.locator(`li[data-region="${r}"] [data-testid="no-figures"]`).waitFor();
    await page.getByTestId('cut-count').getByText('2 regions out of reach').waitFor();
    await shot(page, 'isolated-overview');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    const sub = await page.locator('.page-title p').textContent();
    if (sub.includes('Every job of every region')) throw new Error('cut off, the jobs page says: ' + sub);
    await page.getByText('central and west out of reach').waitFor();
    await shot(page, 'isolated-jobs');
    const start = Date.now();
    await until('the note gone after the heal', async () => (await page.getByTestId('cut-off').count()) === 0, 60000);
    console.log(`healed: the note went ${Date.now() - start} ms after the jobs page was shown`);
    await until('the drill done', async () => ['completed', 'failed'].includes((await api('GET', `/v1/drills/${drill.id}`)).drill.state), 90000);
    page.assertNoErrors();
  },

  // The pools chart follows entitlement: /a alone gets the whole region;
  // when /b gets demand, /a's entitlement falls. A pool is edited.
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
    const waiting = Number(await page.locator('[data-tasks]').getAttribute('data-tasks'));
    if (!(waiting > 0)) throw new Error(`/a shows ${waiting} tasks waiting while 100 of 1 cpu ask for more than the region has`);
    const chartPoints = async () => Number(await page.locator('figure.chart [data-points]').first().getAttribute('data-points'));
    // The server samples every second here (tests/ui starts peloton dev
    // with --history-interval 1s); the page reads its history.
    const points = await until('the chart to hold the server\'s samples', async () => {
      const n = await chartPoints();
      return n >= 5 ? n : false;
    });
    const hist = await api('GET', '/v1/history/pools/a');
    const ent = hist.resources.find((r) => r.name === 'cpu').entitlement;
    if (!(Math.max(...ent) >= high && Math.min(...ent.slice(-3)) <= low + 5)) {
      throw new Error(`the server's history of /a's cpu entitlement: ${ent.join(' ')}; want ${high} then about ${low}`);
    }
    await page.waitForTimeout(3000); // a few more samples after the change
    await shot(page, 'pools');
    // A reload still shows the history: at once, not what the page samples
    // from now on.
    const before = await chartPoints();
    await page.reload();
    await page.locator('figure.chart [data-points]').first().waitFor();
    const after = await until('the reloaded chart to draw the server\'s history', async () => {
      const n = await chartPoints();
      return n > 0 ? n : false;
    }, 3000);
    console.log(`pool chart: ${points} samples before the change was seen, ${before} before the reload, ${after} just after it`);
    if (after < before) throw new Error(`after a reload the chart has ${after} samples, ${before} before it`);
    // Edit /b: a limit below its reservation is refused naming the field;
    // a limit above it is kept, and taken away again.
    const pp = await open(browser, '/ui/pools?pool=/b');
    await pp.getByRole('button', { name: 'Edit pool…' }).click();
    const edit = pp.getByRole('dialog', { name: 'Edit pool /b' });
    const reserved = Number(await edit.getByLabel('Reservation cpu (cores)').inputValue());
    await edit.getByLabel('Limit cpu (cores)').fill(String(reserved - 1));
    await edit.getByRole('button', { name: 'Confirm' }).click();
    await edit.getByText('limit.cpu').waitFor();
    console.log('pool edit refused: ' + (await edit.locator('.error').textContent()));
    await edit.getByLabel('Limit cpu (cores)').fill(String(reserved + 10));
    await edit.getByRole('button', { name: 'Confirm' }).click();
    await until('the new limit', async () => (await api('GET', '/v1/pools/b')).pool?.spec?.limit?.cpu === reserved + 10, 10000);
    await pp.locator('table.pool-now[data-pool="/b"] tr[data-resource="cpu"] td[data-field="limit"]').getByText(String(reserved + 10)).waitFor({ timeout: 10000 });
    await pp.getByRole('button', { name: 'Edit pool…' }).click();
    await edit.getByLabel('Limit cpu (cores)').fill('');
    await edit.getByRole('button', { name: 'Confirm' }).click();
    await until('no limit again', async () => (await api('GET', '/v1/pools/b')).pool?.spec?.limit?.cpu === undefined, 10000);
    pp.assertNoErrors();
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
    let streamsBefore = 0;
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/v1/events' && (phase === 'start' || phase === 'sign-out')) streamsBefore++;
    });
    page.on('request', async (req) => {
      const url = new URL(req.url());
      // whoami is asked before signing in too; version is public. The
      // event stream's headers are not reported while it is open: its
      // status ("live" only after a 200, which needs the token) shows it.
      const skip = ['/v1/version', '/v1/auth/whoami', '/v1/events'];
      if (!url.pathname.startsWith('/v1/') || skip.includes(url.pathname)) return;
      // A request sent as the scenario closes its page may find it closed
      // before its headers are read: it is past every phase checked.
      const h = await req.allHeaders().catch(() => null);
      if (h && !(h.authorization ?? '').startsWith('Bearer ')) bare.push(`${url.pathname} (${phase})`);
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
    await page.waitForTimeout(1500);
    if (streamsBefore) throw new Error(`the event stream was asked for ${streamsBefore} times before signing in`);
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

  // A screenshot of every page, for docs/ui-gallery.md: a fresh dev
  // cluster is given pools, batch, service and periodic jobs, a canary
  // update waiting for promotion and a paused migration, then each page is
  // taken at 1280x800 (two of them also dark and 390 px wide) into
  // GALLERY_OUT (default OUT). With GALLERY_MD, the list of them is
  // written there, one line each. SIGNIN_URL is a server offering OIDC
  // sign-in, for the sign-in page.
  async gallery(browser) {
    const out = process.env.GALLERY_OUT ?? OUT;
    mkdirSync(out, { recursive: true });
    // Pools first: "/" gets children only while no job runs in it.
    for (const [path, cpu] of [['/web', 8], ['/batch', 4]]) {
      await api('POST', '/v1/pools', { path, reservation: { cpu, memMb: cpu * 1024 }, share: { cpu: 1 } }).catch((e) => {
        if (!String(e).includes('exists')) throw e;
      });
    }
    const sim = (env, cpu = 0.5) => ({ command: 'sim', env, resources: { cpu, memMb: 128 } });
    // Only the migrated job may use the small cluster spare, which it
    // moves to: the others avoid it.
    const elsewhere = { avoid: ['spare'] };
    const batch = (name, n, env, pool = '/batch') => api('POST', '/v1/jobs', { name, pool, region: 'east', instances: n, labels: { owner: 'data' }, clusters: elsewhere, task: sim(env) });
    const etl = (await batch('etl-backfill', 4, { PELOTON_SIM_DURATION: '1h' })).job;
    await batch('report-daily', 2, { PELOTON_SIM_DURATION: '2s' });
    await batch('import-ledger', 1, { PELOTON_SIM_DURATION: '2s', PELOTON_SIM_EXIT_CODE: '3' });
    await batch('reindex-search', 3, { PELOTON_SIM_DURATION: '1h' });
    const service = (name, n, clusters) => ({ name, pool: '/web', region: 'east', type: 'service', instances: n, labels: { owner: 'web' }, clusters, task: sim({}, 0.2) });
    const web = (await api('POST', '/v1/jobs', service('web-frontend', 3, elsewhere))).job;
    const gw = (await api('POST', '/v1/jobs', service('api-gateway', 2, { prefer: ['sim'] }))).job;
    const nightly = (
      await api('POST', '/v1/jobs', {
        name: 'nightly-report',
        pool: '/batch',
        region: 'east',
        instances: 1,
        labels: { owner: 'data' },
        schedule: { cron: '0 2 * * *', timeZone: 'Europe/Berlin', concurrencyPolicy: 'CONCURRENCY_POLICY_FORBID', keepRuns: 3 },
        clusters: elsewhere,
        task: sim({ PELOTON_SIM_DURATION: '2s' }, 0.1),
      })
    ).job;
    await api('POST', `/v1/jobs/${nightly.id}/run`);
    const running = (id, n) => until(`${n} tasks of ${id} running`, async () => (await api('GET', `/v1/jobs/${id}`)).job.status?.taskStates?.RUNNING === n, 60000);
    await running(web.id, 3);
    await running(gw.id, 2);
    await running(etl.id, 4);
    const spec = (await api('GET', `/v1/jobs/${web.id}/config`)).spec;
    const canary = (await api('POST', `/v1/jobs/${web.id}/updates?batchSize=1&canary=1`, { ...spec, task: { ...spec.task, env: { VERSION: '2' } } })).update;
    await until('the canary waiting for promotion', async () => (await api('GET', `/v1/updates/${canary.id}`)).update.message?.includes('waiting for promotion'), 60000);
    await api('POST', '/v1/migrations', { jobId: gw.id, toCluster: 'spare', startPaused: true, batchSize: 1 });
    await until('the failed and finished jobs', async () => {
      const r = await api('GET', '/v1/jobs?states=JOB_STATE_FAILED&states=JOB_STATE_SUCCEEDED&limit=10');
      return (r.jobs ?? []).length >= 2;
    }, 30000);

    const shots = [];
    const take = async (file, path, line, ready, opts = {}) => {
      const page = opts.url ? await open(browser, undefined, { ...opts, signedOut: true }) : await open(browser, undefined, opts);
      await page.goto((opts.url ?? BASE) + path);
      await ready(page);
      if (!opts.url) await until(`${file}: the event stream live`, () => page.getByTestId('stream').textContent().then((t) => t === 'live'), 10000);
      await page.waitForTimeout(1500); // the page's reads answered, charts drawn
      if (opts.scrollTo) await page.locator(opts.scrollTo).scrollIntoViewIfNeeded();
      const name = file + '.png';
      await page.screenshot({ path: join(out, name) });
      page.assertNoErrors();
      await page.context().close();
      shots.push({ name, path, line });
      console.log(`gallery ${name}: ${path}`);
    };
    const h1 = (name) => (p) => p.getByRole('heading', { level: 1, name }).waitFor();
    const big = { height: 800 };
    await take('overview', '/ui/', 'The overview: regions, clusters, tasks by state, updates, drills and migrations in progress, recent failures.', h1('Overview'), big);
    await take('jobs', '/ui/jobs', 'The jobs list: one page of jobs at a time, searched, filtered and sorted by the server.', h1('Jobs'), big);
    await take('job', `/ui/jobs/${etl.id}`, 'A batch job: its tasks by state, the task table, updates and events.', h1('etl-backfill'), big);
    await take('periodic-job', `/ui/jobs/${nightly.id}`, 'A periodic job: its schedule, the next run and the runs it launched.', h1('nightly-report'), big);
    await take('task', `/ui/jobs/${etl.id}/tasks/0`, "A task: where it runs, its runs and their events, and its log.", h1('Task 0'), big);
    await take('pools', '/ui/pools', 'The pools: the tree with each pool\'s reservation, entitlement, allocation and demand over time.', h1('Pools'), big);
    await take('pool', '/ui/pools?pool=/web', 'One pool (/web) chosen in the tree: its resources now and its history.', h1('Pools'), big);
    await take('hosts', '/ui/hosts', 'The hosts of every region: paged and sorted, with drain, undrain, down and up.', h1('Hosts'), big);
    await take('regions', '/ui/regions', 'The regions and their failure drills as a timeline.', h1('Regions and drills'), big);
    await take('migrations', '/ui/migrations', 'A migration between clusters, paused: its progress and the actions on it.', h1('Migrations'), big);
    await take('canary', `/ui/jobs/${web.id}`, 'A service under a canary update waiting for promotion (the job page\'s updates).', (p) => p.locator('#updates [data-canary]').getByText('waiting for promotion').waitFor(), { ...big, scrollTo: '#updates' });
    if (process.env.SIGNIN_URL) {
      await take('signin', '/ui/', 'The sign-in page of a server with an OIDC issuer: its button, or a pasted token.', (p) => p.getByRole('button', { name: /^Sign in with / }).waitFor(), { ...big, url: process.env.SIGNIN_URL });
    } else {
      await take('signin', '/ui/', 'The sign-in page: a pasted token.', h1('Sign in'), { ...big, url: BASE });
    }
    await take('overview-dark', '/ui/', 'The overview in dark mode (it follows the system).', h1('Overview'), { ...big, scheme: 'dark' });
    await take('job-dark', `/ui/jobs/${etl.id}`, 'A job in dark mode.', h1('etl-backfill'), { ...big, scheme: 'dark' });
    await take('overview-390', '/ui/', 'The overview on a 390 px wide phone.', h1('Overview'), { width: 390, height: 844 });
    await take('job-390', `/ui/jobs/${etl.id}`, 'A job on a 390 px wide phone.', h1('etl-backfill'), { width: 390, height: 844 });

    if (process.env.GALLERY_MD) {
      const rel = process.env.GALLERY_REL ?? 'img/gallery';
      const lines = [
        '# The web UI, page by page',
        '',
        'Each page of the web UI (`/ui/`) on a `peloton dev --regions 3` cluster of simulated hosts, taken',
        'by the browser suite (`make ui-gallery` takes them again: `TestUIGallery` in `tests/ui`, scenario',
        '`gallery` of `ui/tests/browser.mjs`), at 1280x800 unless said.',
        '',
        ...shots.map((s) => `- [${s.name.replace(/\.png$/, '')}](${rel}/${s.name}) (\`${s.path.replace(/\/jobs\/[^/?]+/, '/jobs/<id>')}\`): ${s.line}`),
        '',
      ];
      writeFileSync(process.env.GALLERY_MD, lines.join('\n'));
      console.log(`wrote ${process.env.GALLERY_MD}`);
    }
  },

  // Many jobs (JOBS, 10,000 by default), made through the batch API
  // 1,000 a request: the jobs list, the overview and a job's page each read
  // a page of them, never the whole list. Every answer of the job listing
  // API (GET /v1/jobs) is weighed: one holding more than PAGE_MAX jobs, or
  // a page whose listings add up to more bytes than PAGE_BUDGET jobs take,
  // fails the run. Each page must show its first rows within FIRST_ROWS_MS.
  async many(browser) {
    const N = Number(process.env.JOBS ?? 10000);
    const PAGE_MAX = 500;
    const PAGE_BUDGET = 1000;
    const FIRST_ROWS_MS = 10000;
    const spec = (i) => ({
      name: `many-${i}`,
      instances: 1,
      labels: { owner: 'ui-many' },
      task: { command: 'sim', env: { PELOTON_SIM_DURATION: '1h' }, resources: { cpu: 0.01, memMb: 1 } },
    });
    const t0 = Date.now();
    const have = Number((await api('GET', '/v1/jobs?limit=1&countTotal=true')).total ?? 0);
    for (let made = have; made < N; ) {
      const n = Math.min(1000, N - made);
      const r = await api('POST', '/v1/jobs:batchCreate', { requestId: `ui-many-${made}`, jobs: Array.from({ length: n }, (_, i) => spec(made + i)) });
      const bad = (r.results ?? []).filter((x) => !x.jobId);
      if (bad.length || (r.results ?? []).length !== n) throw new Error(`creating jobs ${made}..${made + n}: ${JSON.stringify(bad.slice(0, 3))}`);
      made += n;
    }
    const created = Date.now() - t0;
    // Every task placed and running, so that the pages are measured on a
    // settled region (not one whose events reread them every 2 s).
    const settled = await until(
      `the ${N} tasks running`,
      async () => {
        const r = await api('GET', '/v1/jobs?limit=1&countTotal=true&states=JOB_STATE_RUNNING');
        return Number(r.taskStates?.RUNNING ?? 0) >= N && Number(r.total ?? 0) >= N ? r : null;
      },
      600000,
    );
    console.log(`${N} jobs created in ${created} ms (batches of 1,000), all ${settled.taskStates.RUNNING} tasks running after ${Date.now() - t0} ms`);
    // What one job weighs in a listing, to set the bound in bytes.
    const sample = await fetch(BASE + '/v1/jobs?limit=100', { headers: { Authorization: `Bearer ${DEV_TOKEN}` } });
    const perJob = (await sample.arrayBuffer()).byteLength / 100;
    const budget = Math.round(perJob * PAGE_BUDGET);
    const newest = (await api('GET', '/v1/jobs?limit=1&order=JOB_ORDER_NEWEST_FIRST')).jobs[0];

    const pages = [
      ['jobs', '/ui/jobs', (p) => p.locator('table.jobs tbody tr[data-job]').first()],
      ['overview', '/ui/', (p) => p.getByTestId('active-jobs').filter({ hasText: N.toLocaleString('en-US') })],
      ['job', `/ui/jobs/${newest.id}`, (p) => p.getByRole('heading', { level: 1, name: newest.spec.name })],
    ];
    const report = [];
    for (const [name, path, firstRows] of pages) {
      const page = await open(browser);
      const listings = [];
      let requests = 0;
      let bytes = 0;
      page.on('response', async (resp) => {
        const u = new URL(resp.url());
        if (u.origin !== new URL(BASE).origin || u.pathname === '/v1/events') return;
        requests++;
        const body = await resp.body().catch(() => null);
        if (!body) return;
        bytes += body.byteLength;
        if (u.pathname === '/v1/jobs' && resp.request().method() === 'GET') {
          let jobs = 0;
          try {
            jobs = (JSON.parse(body.toString()).jobs ?? []).length;
          } catch {
            // not JSON: weighed all the same
          }
          listings.push({ query: u.search, jobs, bytes: body.byteLength });
        }
      });
      const start = Date.now();
      await page.goto(BASE + path);
      await firstRows(page).waitFor({ timeout: 60000 });
      const shown = Date.now() - start;
      await page.waitForTimeout(3000); // the reads after the first rows
      page.assertNoErrors();
      const listed = listings.reduce((a, l) => a + l.bytes, 0);
      const most = Math.max(0, ...listings.map((l) => l.jobs));
      report.push({ name, shown, requests, bytes, listings: listings.length, listed, most });
      console.log(`${name}: first rows in ${shown} ms; ${requests} requests, ${bytes} bytes; ${listings.length} job listings, ${listed} bytes, at most ${most} jobs in one`);
      for (const l of listings) if (l.jobs > PAGE_MAX) throw new Error(`${name}: GET /v1/jobs${l.query} answered ${l.jobs} jobs, more than a page (${PAGE_MAX})`);
      if (listed > budget) throw new Error(`${name}: job listings of ${listed} bytes, more than ${PAGE_BUDGET} jobs' worth (${budget} bytes at ${Math.round(perJob)} per job) of ${N} jobs: ${listings.map((l) => l.query).join(' ')}`);
      if (shown > FIRST_ROWS_MS) throw new Error(`${name}: first rows after ${shown} ms, more than ${FIRST_ROWS_MS}`);
      if (name === 'jobs') {
        await page.getByRole('navigation', { name: 'Jobs pages' }).getByText(`of ${N.toLocaleString('en-US')}`).or(page.getByRole('navigation', { name: 'Jobs pages' }).getByText(`of ${N}`)).first().waitFor();
        await shot(page, 'many-jobs');
      }
      await page.context().close();
    }
    console.log(`the whole list would be ${Math.round(perJob * N)} bytes; the bound per page is ${budget}`);
  },

  // Signing in with the server's OIDC issuer (a test issuer whose user is
  // OIDC_USER): the button goes to the issuer and back signed in, by the
  // authorization code with PKCE; an answer whose state was tampered
  // with, a declined sign-in and a refusing token endpoint are each shown
  // on the sign-in page, and leave no code in the address bar.
  async oidc(browser) {
    const issuer = process.env.ISSUER_URL;
    const user = process.env.OIDC_USER;
    if (!issuer || !user) throw new Error('ISSUER_URL and OIDC_USER are needed');
    const host = new URL(issuer).host;
    const page = await open(browser, '/ui/jobs');
    const button = page.getByRole('button', { name: `Sign in with ${host}`, exact: true });
    const err = page.getByTestId('signin-error');
    const tokenCalls = [];
    page.on('request', (req) => {
      if (req.url().startsWith(issuer + '/token') && req.method() === 'POST') tokenCalls.push(req.postData() ?? '');
    });
    const noCodeInAddress = () => {
      const u = new URL(page.url());
      if (u.searchParams.has('code') || u.searchParams.has('state') || u.searchParams.has('error')) throw new Error('the issuer\'s answer stayed in the address: ' + page.url());
    };
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await button.waitFor();
    await shot(page, 'signin-oidc');

    // A tampered state: the issuer's real code comes back with another
    // state, and is never redeemed.
    await page.route(issuer + '/auth?**', async (route) => {
      const resp = await route.fetch({ maxRedirects: 0 });
      const loc = new URL(resp.headers().location);
      if (!loc.searchParams.get('code')) throw new Error('the issuer gave no code: ' + loc);
      loc.searchParams.set('state', 'tampered-' + loc.searchParams.get('state'));
      await route.fulfill({ status: 302, headers: { location: loc.toString() } });
    });
    await button.click();
    await err.filter({ hasText: 'state differs' }).waitFor();
    console.log('a tampered state: ' + (await err.textContent()));
    noCodeInAddress();
    if (tokenCalls.length) throw new Error('the code of a tampered answer was redeemed');
    await page.unrouteAll();

    // Declined at the issuer.
    await page.route(issuer + '/auth?**', async (route) => {
      const q = new URL(route.request().url()).searchParams;
      const back = new URL(q.get('redirect_uri'));
      back.search = new URLSearchParams({ error: 'access_denied', error_description: 'the user said no', state: q.get('state') }).toString();
      await route.fulfill({ status: 302, headers: { location: back.toString() } });
    });
    await button.click();
    await err.filter({ hasText: 'declined' }).waitFor();
    console.log('declined: ' + (await err.textContent()));
    noCodeInAddress();
    await page.unrouteAll();

    // The token endpoint refuses the code.
    await page.route(issuer + '/token', (route) =>
      route.fulfill({ status: 400, headers: { 'Access-Control-Allow-Origin': '*' }, contentType: 'application/json', body: JSON.stringify({ error: 'invalid_grant', error_description: 'the code has expired' }) }),
    );
    await button.click();
    await err.filter({ hasText: 'token endpoint refused the code' }).waitFor();
    console.log('a refusing token endpoint: ' + (await err.textContent()));
    await shot(page, 'signin-oidc-error');
    noCodeInAddress();
    await page.unrouteAll();

    // Signed in for real, back on the page the sign-in started from.
    tokenCalls.length = 0;
    let authURL;
    page.on('request', (req) => {
      if (req.url().startsWith(issuer + '/auth?')) authURL = new URL(req.url());
    });
    const started = Date.now();
    await button.click();
    await page.getByTestId('who').filter({ hasText: user }).waitFor();
    console.log(`signed in as ${user} through ${host} in ${Date.now() - started} ms`);
    await page.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    noCodeInAddress();
    if (new URL(page.url()).pathname !== '/ui/jobs') throw new Error('back at ' + page.url() + ', not the jobs page');
    const q = authURL.searchParams;
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('nonce') || !q.get('state') || !q.get('scope').split(' ').includes('openid')) {
      throw new Error('the authorization request: ' + authURL);
    }
    if (tokenCalls.length !== 1) throw new Error(`${tokenCalls.length} calls of the token endpoint, want 1`);
    const form = new URLSearchParams(tokenCalls[0]);
    const verifier = form.get('code_verifier') ?? '';
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) throw new Error('code_verifier ' + verifier);
    if (createHash('sha256').update(verifier).digest('base64url') !== q.get('code_challenge')) throw new Error('the challenge is not the S256 of the verifier');
    if (form.has('client_secret')) throw new Error('a client secret was sent');
    await page.getByTestId('stream').filter({ hasText: 'live' }).waitFor();
    // The ID token is the tab's bearer token: the API answers as the user.
    const who = await page.evaluate(async () => {
      const t = sessionStorage.getItem('peloton-token');
      const r = await fetch('/v1/auth/whoami', { headers: { Authorization: 'Bearer ' + t } });
      return { parts: t.split('.').length, who: await r.json() };
    });
    if (who.parts !== 3 || who.who.name !== user || who.who.method !== 'oidc') throw new Error('whoami with the kept token: ' + JSON.stringify(who));
    await shot(page, 'signin-oidc-done');
    // The page reloads signed in (the token is kept for the tab).
    await page.reload();
    await page.getByTestId('who').filter({ hasText: user }).waitFor();
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
