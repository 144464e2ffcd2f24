import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Permission } from '@app/contracts';
import type { Principal } from './principal';

export const PUBLIC_ROUTE = 'auth:public';
export const REQUIRED_PERMISSIONS = 'auth:permissions';

/** No credentials needed (login, health). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** The caller must hold every listed permission (403 forbidden otherwise). */
export const RequirePermissions = (...permissions: Permission[]) => SetMetadata(REQUIRED_PERMISSIONS, permissions);

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest().principal;
});
