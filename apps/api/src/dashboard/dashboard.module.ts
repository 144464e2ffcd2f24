import { Logger, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express, NextFunction, Request, Response } from 'express';
import { static as serveStatic } from 'express';
import { join } from 'node:path';
import { dashboardDirectory } from './dashboard-assets';

export const DASHBOARD_PATH = '/dashboard';

/**
 * Serves the browser dashboard (dist/dashboard, built by `npm run build`) at /dashboard/ and redirects / to it.
 *
 * Mounted straight on Express rather than as controllers: the files are public (the app authenticates each API call
 * itself with a bearer token), so they sit outside the /api/v1 prefix, the auth guard and the OpenAPI document.
 * onModuleInit runs after Nest registered its routes and before its not-found handler, so these win only for paths
 * no controller owns.
 */
@Module({})
export class DashboardModule implements OnModuleInit {
  private readonly logger = new Logger('Dashboard');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    // an application context (the CLI) has no HTTP server to mount on
    if (!adapter) return;
    const app = adapter.getInstance<Express>();
    const dir = dashboardDirectory();
    app.get('/', (_req: Request, res: Response) => res.redirect(302, `${DASHBOARD_PATH}/`));
    if (!dir) {
      this.logger.warn('dist/dashboard is missing: run `npm run build` to serve the dashboard');
      app.use(DASHBOARD_PATH, (_req: Request, res: Response) => {
        res.status(503).type('text/plain').send('The dashboard is not built: run `npm run build`.\n');
      });
      return;
    }
    const index = join(dir, 'index.html');
    app.use(
      DASHBOARD_PATH,
      serveStatic(dir, {
        index: false,
        redirect: false,
        fallthrough: true,
        setHeaders: (res, path) => {
          // Vite puts a content hash in every asset name, so an asset never changes under its URL
          if (path.includes(`${join(dir, 'assets')}`)) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
          else res.setHeader('Cache-Control', 'no-cache');
        },
      }),
      (req: Request, res: Response, next: NextFunction) => {
        if (req.method !== 'GET' && req.method !== 'HEAD') return next();
        // a missing asset is a 404, not the app: a stale index.html asking for old hashes must not get HTML back
        if (req.path.startsWith('/assets/')) return next();
        if (req.originalUrl.split('?')[0] === DASHBOARD_PATH) return res.redirect(301, `${DASHBOARD_PATH}/`);
        // SPA fallback: every other path under /dashboard/ is a screen of the app
        res.setHeader('Cache-Control', 'no-cache');
        res.sendFile(index);
      },
    );
  }
}
