import { escapeHtml, renderOAuthErrorPage } from './oauth-error-page';

describe(renderOAuthErrorPage.name, () => {
  it('escapes everything it shows', () => {
    const page = renderOAuthErrorPage({ code: 'dpa:OAuth:<x>', message: '<script>alert(1)</script> & "quotes"', requestId: "r'1" });
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;&#47;script&gt; &amp; &quot;quotes&quot;');
    expect(page).toContain('dpa:OAuth:&lt;x&gt;');
    expect(page).toContain('r&#39;1');
    expect(page).toMatch(/start the connection again/);
  });

  it('escapes the HTML specials', () => {
    expect(escapeHtml(`&<>"'\`=/`)).toBe('&amp;&lt;&gt;&quot;&#39;&#96;&#61;&#47;');
  });
});
