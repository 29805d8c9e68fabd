import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import type { Identity } from './identity.js';
import { clientOf } from '../../http/client-context.js';
import {
  Empty,
  GoogleInput,
  LoginInput,
  OtpInput,
  OtpVerifyInput,
  PasswordResetConfirmInput,
  PasswordResetInput,
  RefreshInput,
  TokenResponse,
  VerifyInput,
} from './schema.js';

const tags = ['auth'];

/** `/auth/*`: password sign-in, tokens, codes, password reset, one-time codes, Google. */
export function registerAuthRoutes(app: App, id: Identity) {
  app.post(
    '/auth/login',
    {
      config: { auth: 'none', grants: 'self-signup' },
      schema: {
        tags,
        summary: 'Sign in with email or phone and password',
        body: LoginInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) => id.passwords.login(req.body, clientOf(req)),
  );

  app.post(
    '/auth/refresh-token',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Exchange a refresh token for a new token pair',
        body: RefreshInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) => id.sessions.refresh(req.body.refresh_token),
  );

  app.post(
    '/auth/logout',
    {
      config: { auth: 'person', permission: 'authenticated' },
      schema: { tags, summary: 'End the current session', response: { 200: Empty } },
    },
    async (req) => {
      await id.sessions.logout(authOf(req));
      return {};
    },
  );

  app.post(
    '/auth/verification-code',
    {
      config: { auth: 'bearer', permission: 'authenticated' },
      schema: {
        tags,
        summary: 'Send a new confirmation code to the unconfirmed address',
        response: { 200: Empty },
      },
    },
    async (req) => {
      await id.codeFlows.sendVerification(authOf(req));
      return {};
    },
  );

  app.post(
    '/auth/verify',
    {
      config: { auth: 'bearer', permission: 'authenticated' },
      schema: {
        tags,
        summary: 'Confirm the email address or phone number with a code',
        body: VerifyInput,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await id.codeFlows.verify(authOf(req), req.body.code);
      return {};
    },
  );

  app.post(
    '/auth/password-reset',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Send a password reset code (answers alike for unknown accounts)',
        body: PasswordResetInput,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await id.codeFlows.requestPasswordReset(req.body.email, clientOf(req));
      return {};
    },
  );

  app.post(
    '/auth/password-reset/confirm',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Set a new password with the reset code; ends every other session',
        body: PasswordResetConfirmInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) => id.codeFlows.confirmPasswordReset(req.body, clientOf(req)),
  );

  app.post(
    '/auth/otp',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Send a one-time sign-in code (answers alike for unknown accounts)',
        body: OtpInput,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await id.codeFlows.requestOtp(req.body, clientOf(req));
      return {};
    },
  );

  app.post(
    '/auth/otp/verify',
    {
      config: { auth: 'none', grants: 'self-signup' },
      schema: {
        tags,
        summary: 'Sign in with a one-time code',
        body: OtpVerifyInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) => id.codeFlows.verifyOtp(req.body, clientOf(req)),
  );

  app.post(
    '/auth/provider/google',
    {
      config: { auth: 'none', grants: 'self-signup' },
      schema: {
        tags,
        summary: 'Create or return to a wallet with a Google ID token',
        body: GoogleInput,
        response: { 200: TokenResponse },
      },
    },
    async (req, reply) => id.google.connect(req.body, clientOf(req, reply)),
  );
}
