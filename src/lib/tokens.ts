/** The token response (docs/auth.md, its opening): every answer that issues tokens. */
export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
  wallet: { id: string; address: string; organization_id: string | null };
}
