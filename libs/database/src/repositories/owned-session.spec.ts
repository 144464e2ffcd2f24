import * as path from 'node:path';
import * as ts from 'typescript';
import type { Session } from '../entities/session.entity';
import type { CampaignsRepository } from './campaigns.repository';
import type { ChatsRepository } from './chats.repository';
import type { ContactsRepository } from './contacts.repository';
import type { GroupsRepository } from './groups.repository';
import type { MessagesRepository } from './messages.repository';
import { serviceSession } from './session-scope';
import type { OwnedSession, SessionsRepository } from './sessions.repository';

interface Repositories {
  sessions: SessionsRepository;
  messages: MessagesRepository;
  chats: ChatsRepository;
  campaigns: CampaignsRepository;
  contacts: ContactsRepository;
  groups: GroupsRepository;
}

/**
 * Compiled, never run: what the brand refuses. Each `@ts-expect-error` must meet a type error on its line, or the
 * directive is itself an error (TS2578), which the test below reads; the unmarked lines show the calls are otherwise
 * well formed.
 */
export async function checkedSessionsOnly(repos: Repositories, organizationId: string, sessionId: string, unchecked: Session): Promise<void> {
  // @ts-expect-error an id straight from a request is not a checked session
  await repos.messages.findInSession(sessionId, 'msg_1');
  // @ts-expect-error nor is a Session read without the organization check (an entity, a row of another query)
  await repos.chats.page(unchecked, 10);
  // @ts-expect-error nor an object literal that copies a session's fields: the brand's symbol cannot be named here
  await repos.campaigns.listInSession({ ...unchecked, id: sessionId, organizationId }, 10);
  // @ts-expect-error the lookup's answer may be null: a 404 has to be decided first
  await repos.sessions.markStopped(await repos.sessions.findInOrganization(organizationId, sessionId));
  // @ts-expect-error a method the API shares with the gateway and the dispatcher takes no bare id either
  await repos.contacts.find(sessionId, 'ana@s.whatsapp.net');
  // @ts-expect-error nor a look-alike of a service session: only serviceSession makes one
  await repos.groups.storedOf({ id: sessionId, organizationId }, 'team@g.us');
  // @ts-expect-error a service session without its organization, where the method reads the organization
  await repos.contacts.find(serviceSession(sessionId), 'ana@s.whatsapp.net');

  const session: OwnedSession | null = await repos.sessions.findInOrganization(organizationId, sessionId);
  if (!session) return;
  await repos.messages.findInSession(session, 'msg_1');
  await repos.chats.page(session, 10);
  await repos.campaigns.listInSession(session, 10);
  await repos.sessions.markStopped(session);
  await repos.contacts.find(session, 'ana@s.whatsapp.net');
  await repos.groups.storedOf(session, 'team@g.us');
  await repos.contacts.find(serviceSession(sessionId, organizationId), 'ana@s.whatsapp.net');
  await repos.messages.page(serviceSession(sessionId), {}, 10);
}

describe('OwnedSession', () => {
  it('a bare id, an unchecked Session or a look-alike literal does not compile where a checked or service session is required', () => {
    const configFile = path.resolve(__dirname, '../../../../tsconfig.json');
    const { config } = ts.readConfigFile(configFile, (file) => ts.sys.readFile(file));
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, path.dirname(configFile));
    const program = ts.createProgram([__filename], { ...options, noEmit: true });
    const source = program.getSourceFile(__filename)!;
    const expected = source.text.split('\n').filter((line) => line.trim().startsWith('// @ts-expect-error')).length;
    expect(expected).toBe(7);
    const diagnostics = ts.getPreEmitDiagnostics(program, source).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
    // a compiler run over the repositories' declarations: longer than jest's default on a busy machine
  }, 120_000);
});
