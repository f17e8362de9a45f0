import { chromium } from 'playwright-core';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
const ctx = await b.newContext({ viewport: { width: Number(process.env.W || 1280), height: 900 }, colorScheme: process.env.SCHEME || 'light' });
const p = await ctx.newPage();
p.on('console', (m) => console.log('console:', m.type(), m.text()));
p.on('pageerror', (e) => console.log('pageerror:', e.message));
const base = process.env.BASE;
for (const [name, path] of JSON.parse(process.env.PAGES)) {
  await p.goto(base + path);
  await p.waitForTimeout(Number(process.env.WAIT || 1500));
  await p.screenshot({ path: `/tmp/shots/${name}.png`, fullPage: true });
}
await b.close();
