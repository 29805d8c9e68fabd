import { Type } from 'typebox';
import type { App } from '../../http/app.js';
import type { TokenService } from './token-service.js';

const Jwks = Type.Object({
  keys: Type.Array(Type.Object({}, { additionalProperties: true })),
});

export function registerJwksRoute(app: App, tokens: TokenService) {
  app.get(
    '/.well-known/jwks.json',
    { config: { auth: 'none' }, schema: { tags: ['auth'], response: { 200: Jwks } } },
    async () => tokens.publicJwks(),
  );
}
