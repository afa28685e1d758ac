import { confirmationCodeMatches, hashConfirmationCode, newConfirmationCode, renderAuthorizedPage, withFragment } from './oauth-confirmation';

describe('OAuth confirmation code and page (issue 41)', () => {
  it('makes 160-bit codes a person can type, compared in any case, without dashes, O as 0 and I/L as 1', () => {
    const code = newConfirmationCode();
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){7}$/);
    expect(new Set(Array.from({ length: 50 }, newConfirmationCode)).size).toBe(50);
    const stored = hashConfirmationCode(code);
    expect(confirmationCodeMatches(code, stored)).toBe(true);
    expect(confirmationCodeMatches(code.toLowerCase().replace(/-/g, ''), stored)).toBe(true);
    expect(confirmationCodeMatches(code.replace(/0/g, 'O').replace(/1/g, 'l'), stored)).toBe(true);
    expect(confirmationCodeMatches(`${code.slice(0, -1)}${code.endsWith('A') ? 'B' : 'A'}`, stored)).toBe(false);
    expect(confirmationCodeMatches(code, null)).toBe(false);
    expect(confirmationCodeMatches('A'.repeat(101), stored)).toBe(false);
  });

  it('puts the code in the fragment of the way back, replacing any fragment there', () => {
    expect(withFragment('/settings/git?x=1', 'integration_confirmation', 'AB-CD')).toBe('/settings/git?x=1#integration_confirmation=AB-CD');
    expect(withFragment('https://app.example.com/back#old', 'integration_confirmation', 'AB')).toBe('https://app.example.com/back#integration_confirmation=AB');
  });

  it('escapes everything it shows', () => {
    const page = renderAuthorizedPage({
      provider: 'GITHUB',
      account: '<script>x</script>',
      organization: '"><img onerror=alert(1)>',
      integrationId: 'id',
      confirmationCode: 'AAAA',
      continueUrl: '/back#integration_confirmation=AAAA',
      apiUrl: 'https://api.example.com',
    });
    expect(page).not.toContain('<script>x');
    expect(page).not.toContain('<img');
    expect(page).toContain('GitHub account <strong>&lt;script&gt;x&lt;&#47;script&gt;</strong>');
    expect(page).toContain('Confirmation code: <code>AAAA</code>');
  });
});
