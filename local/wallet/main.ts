// `npm run wallet -- <command>`: a wallet on a laptop, against `npm start` or a tenant
// (`npm run tenant`): builds through the API's /tx/*, signs with its own key (@solana/kit) and
// sends to the chain's JSON-RPC, as a wallet app does.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgsOrExit, usageExit } from '../../core/cli';
import { createWalletClient, generateWalletKey, plainHttpBeyondLoopback, walletKeyFromBytes, WalletRequestError, type WalletClient } from './client';
import { runTrade } from './trade';

const USAGE = `usage: npm run wallet -- <command> [options]
commands:
  address                       print the wallet's address (creates its keypair file)
  trade                         the whole loop on the current market: place a buy_yes order
                                through /tx, sign, send to the chain, wait until /orders and
                                the order book show it, cancel it the same way, wait again
  place-order --market M --side S --price P --quantity Q
  cancel-order --market M --order-id N
  claim-payout --market M
  orders | positions            the wallet's orders or positions (signed reads)
options:
  --api URL        the tenant's API (default http://localhost:3000); use https:// for anything
                   but localhost: over http anyone on the way reads and changes what it answers
  --program ID     the market program to sign for (default the spec's, HnWM49…): a transaction
                   /tx/* builds is signed only if it is the instruction asked for, of this
                   program, with the accounts the request implies; anything else is refused
  --rpc URL        the chain's JSON-RPC (default http://localhost:8899)
  --keypair FILE   Solana CLI keypair file (default .data/wallet.json; created when missing)
  --domain HOST    the auth messages' domain, one of the tenant's PUBLIC_HOSTS (default: the API's host)
  --help`;

const COMMANDS = ['address', 'trade', 'place-order', 'cancel-order', 'claim-payout', 'orders', 'positions'] as const;
type Command = (typeof COMMANDS)[number];
/** The options each command cannot do without: checked before the keypair or the network is touched. */
const REQUIRED: Record<Command, readonly ('market' | 'price' | 'order-id')[]> = {
  address: [],
  trade: [],
  'place-order': ['market', 'price'],
  'cancel-order': ['market', 'order-id'],
  'claim-payout': ['market'],
  orders: [],
  positions: [],
};

function parse() {
  return parseArgsOrExit(
    {
      allowPositionals: true,
      options: {
        api: { type: 'string', default: 'http://localhost:3000' },
        rpc: { type: 'string', default: 'http://localhost:8899' },
        program: { type: 'string' },
        keypair: { type: 'string', default: path.join('.data', 'wallet.json') },
        domain: { type: 'string' },
        market: { type: 'string' },
        side: { type: 'string', default: 'buy_yes' },
        price: { type: 'string' },
        quantity: { type: 'string', default: '1000000' },
        'order-id': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    },
    USAGE,
    { commands: COMMANDS },
  );
}

const fail = (line: string): never => {
  process.stderr.write(`${line}\n`);
  process.exit(1);
};

async function loadKey(file: string) {
  if (existsSync(file)) {
    const bytes = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) {
      fail(`${file} is not a Solana keypair file (a JSON array of 64 bytes)`);
    }
    return walletKeyFromBytes(Uint8Array.from(bytes as number[]));
  }
  const key = await generateWalletKey();
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, JSON.stringify([...key.bytes]), { mode: 0o600 });
  process.stderr.write(`new wallet ${key.signer.address}, keypair in ${file}\n`);
  return key;
}

const print = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

async function main(): Promise<void> {
  const { values: o, positionals } = parse();
  const command = positionals[0] as Command;
  if (positionals.length > 1) usageExit(`unexpected argument ${positionals[1]}`, USAGE);
  const missing = REQUIRED[command].find((name) => o[name] === undefined);
  if (missing) usageExit(`${command} needs --${missing}`, USAGE);
  const key = await loadKey(o.keypair!);
  // The tenant's chain id, from its public config: the auth messages must name it.
  const probe = createWalletClient({ api: o.api!, rpc: o.rpc!, key, domain: o.domain });
  const config = (await probe.read('/config').catch((err: Error) => fail(`cannot read ${o.api}/api/v1/config: ${err.message}`))) as { chainId?: string; data?: { chainId?: string } };
  const wallet: WalletClient = createWalletClient({ api: o.api!, rpc: o.rpc!, key, domain: o.domain, chain: config.chainId ?? config.data?.chainId, program: o.program });
  if (plainHttpBeyondLoopback(o.api!)) process.stderr.write(`warning: ${o.api} is plain http beyond this machine: use https://\n`);
  const need = (name: 'market' | 'price' | 'order-id') => o[name] ?? fail(`${command} needs --${name}`);

  switch (command) {
    case 'address':
      return void process.stdout.write(`${wallet.address}\n`);
    case 'trade':
      return void (await runTrade(wallet, (line) => process.stdout.write(`${line}\n`)));
    case 'place-order':
      return print({ signature: await wallet.send('place-order', { market: need('market'), side: o.side, priceBps: Number(need('price')), quantity: o.quantity }) });
    case 'cancel-order':
      return print({ signature: await wallet.send('cancel-order', { market: need('market'), orderId: need('order-id') }) });
    case 'claim-payout':
      return print({ signature: await wallet.send('claim-payout', { market: need('market') }) });
    case 'orders':
    case 'positions':
      return print(await wallet.signedRead(`/${command}`));
    default: {
      const unreachable: never = command;
      return fail(`unknown command ${String(unreachable)}`);
    }
  }
}

main().catch((err: unknown) => {
  if (err instanceof WalletRequestError) fail(err.message);
  // The chain's refusal (a JSON-RPC error) names the program error; nothing else to add.
  fail(err instanceof Error ? err.message : String(err));
});
