import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Starts DynamoDB Local bound to 127.0.0.1 only.
 *
 * DynamoDB Local has no bind-address option and listens on every interface. tessera's local
 * cloud must not expose a database on the network, so this launcher builds the server from the
 * usual command-line arguments, points its Jetty connectors at the loopback address, then starts it.
 * Run in single-file source mode: java -cp DynamoDBLocal.jar:DynamoDBLocal_lib/* LoopbackDynamoDBLocal.java -port N -inMemory
 *
 * It also exits when its standard input closes. The Node process that starts it holds that pipe
 * open, so if Node dies without stopping it (killed, or its output pipe closed), the JVM follows
 * instead of lingering as an orphan with a port open.
 */
public class LoopbackDynamoDBLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector) {
        ((ServerConnector) connector).setHost("127.0.0.1");
      }
    }
    proxy.start();
    System.out.println("tessera: DynamoDB Local listening on 127.0.0.1");
    Thread parentWatch = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // nothing is ever written; read() returns -1 when the parent is gone
        }
      } catch (java.io.IOException ignored) {
        // a broken pipe means the same thing as end of input
      }
      System.exit(0);
    });
    parentWatch.setDaemon(true);
    parentWatch.start();
    proxy.join();
  }
}
