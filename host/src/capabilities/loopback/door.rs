//! The listening socket of a loopback server, which a `refuse` mode closes (clients then get
//! "connection refused", and the connections it accepted break, as when a server goes down) and a
//! later mode opens again on the same port, so that a client's base URL stays valid. Sealed at
//! the stop, it never opens again. It knows nothing of requests.

use std::future::poll_fn;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use tokio::net::{TcpListener, TcpSocket, TcpStream};

use super::shutdown::{Connection, Shutdown, StoppableStream};

/// Connections waiting to be accepted; far more than a test or an agent opens at once.
const BACKLOG: u32 = 1024;

/// How long to wait after an accept error that is not one connection's (too many open files),
/// before accepting again: long enough not to spin, short enough not to be noticed.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

struct State {
    listener: Option<TcpListener>,
    /// Given when the door closes: the connections accepted while it was open break then.
    period: Shutdown,
    /// The accept loop, woken when the door opens or closes.
    waiting: Option<Waker>,
    /// Closed for good (the server stopped).
    sealed: bool,
}

pub struct Door {
    address: SocketAddr,
    state: Mutex<State>,
}

impl Door {
    /// Binds a free port on 127.0.0.1, open when this returns.
    pub fn bind() -> io::Result<Self> {
        let listener = listen(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
        let address = listener.local_addr()?;
        let state = State { listener: Some(listener), period: Shutdown::new(), waiting: None, sealed: false };
        Ok(Self { address, state: Mutex::new(state) })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Listens again on the same port; nothing when it listens already or was sealed.
    pub fn open(&self) -> io::Result<()> {
        let mut state = self.state();
        if state.listener.is_none() && !state.sealed {
            state.listener = Some(listen(self.address)?);
            state.period = Shutdown::new();
            wake(&mut state);
        }
        Ok(())
    }

    /// Stops listening, so connections are refused, and breaks the connections it accepted.
    pub fn close(&self) {
        let mut state = self.state();
        // Dropping the socket closes it now, before this returns: the next connect is refused.
        state.listener = None;
        state.period.stop();
        wake(&mut state);
    }

    /// Closes it for good.
    pub fn seal(&self) {
        self.state().sealed = true;
        self.close();
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next connection, with the signal of the period it was accepted in; pending while the
    /// door is closed.
    fn poll_accept(&self, context: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr, Shutdown)>> {
        let mut state = self.state();
        let accepted = match state.listener.as_ref() {
            Some(listener) => listener.poll_accept(context),
            None => Poll::Pending,
        };
        match accepted {
            Poll::Ready(result) => Poll::Ready(result.map(|(stream, peer)| (stream, peer, state.period.clone()))),
            Poll::Pending => {
                state.waiting = Some(context.waker().clone());
                Poll::Pending
            }
        }
    }
}

fn wake(state: &mut State) {
    if let Some(waker) = state.waiting.take() {
        waker.wake();
    }
}

/// A listening socket on `address` that can be bound again while connections it accepted before
/// linger (in `TIME_WAIT`, or not yet closed by the client): `SO_REUSEADDR`.
fn listen(address: SocketAddr) -> io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(BACKLOG)
}

/// The door as axum serves it: each connection breaks at the server's stop, at the end of its
/// listening period, or at its own reset.
pub struct DoorListener {
    door: Arc<Door>,
    stop: Shutdown,
}

impl DoorListener {
    pub fn new(door: Arc<Door>, stop: Shutdown) -> Self {
        Self { door, stop }
    }
}

impl axum::serve::Listener for DoorListener {
    type Io = StoppableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match poll_fn(|context| self.door.poll_accept(context)).await {
                Ok((stream, peer, period)) => {
                    return (StoppableStream::new(stream, vec![self.stop.clone(), period]), peer);
                }
                // One connection's failure (it was reset before it was accepted): take the next.
                Err(error) if is_connection_error(&error) => {}
                Err(_) => tokio::time::sleep(ACCEPT_RETRY).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.door.address())
    }
}

fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

impl Connected<IncomingStream<'_, DoorListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, DoorListener>) -> Self {
        stream.io().connection()
    }
}
